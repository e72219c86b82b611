"""``helix bench cli --json --quick``: help and import start-up times, with their baseline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def test_the_cli_suite_prints_both_figures_against_a_bare_python(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "helix", "bench", "cli", "--json", "--quick"],
        capture_output=True,
        text=True,
        env={**os.environ, "HELIX_HOME": str(tmp_path)},
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    figures = {f["name"]: f for f in map(json.loads, result.stdout.splitlines())}
    assert set(figures) == {"help_ms", "import_ms"}
    for name, figure in figures.items():
        assert set(figure) == {"suite", "name", "value", "unit", "params", "baseline", "ratio"}
        assert (figure["suite"], figure["unit"]) == ("cli", "ms")
        assert figure["params"]["runs"] == 3
        for key in ("value", "baseline", "ratio"):
            assert isinstance(figure[key], float), (name, key)
            assert figure[key] > 0, (name, key)
        assert abs(figure["ratio"] - figure["value"] / figure["baseline"]) < 0.01 * figure["ratio"]
    # One bare interpreter is the baseline of both figures, measured in this run.
    assert figures["help_ms"]["baseline"] == figures["import_ms"]["baseline"]
    assert figures["help_ms"]["params"]["command"] == "helix --help"
    assert not any(tmp_path.iterdir())  # timing the help writes nothing
