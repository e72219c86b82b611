"""``helix nodes`` embedded: this machine as node ``local``; drain refused, unknown 3."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from helix.cli._app import app


def _helix(home: Path, *args: str) -> tuple[int, str, str]:
    env = {"HELIX_HOME": str(home), "HELIX_DB": None, "HELIX_SERVER": None, "HELIX_TOKEN": None}
    result = CliRunner().invoke(app, list(args), env=env, prog_name="helix")
    return result.exit_code, result.stdout, result.stderr


def test_nodes_lists_this_machine_and_refuses_to_drain_it(helix_home: Path) -> None:
    code, out, err = _helix(helix_home, "nodes")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == ["ID", "STATE", "ADDRESS", "CPU", "MEMORY", "RUNS", "LABELS"]
    assert row.split()[:2] == ["local", "alive"]
    assert row.split()[-2:] == ["0", "-"]

    code, out, err = _helix(helix_home, "nodes", "--json")
    assert code == 0, err
    [node] = [json.loads(line) for line in out.splitlines()]
    assert (node["id"], node["executor"], node["runs"], node["run_count"]) == (
        "local",
        "local",
        [],
        0,
    )
    assert node["resources"]["CPU"] >= 1

    code, out, err = _helix(helix_home, "nodes", "drain", "local")
    assert code == 1
    assert err.startswith("error: runs here are driven by the processes that started them")
    code, out, err = _helix(helix_home, "nodes", "drain", "worker-3")
    assert code == 3
    assert err == "error: node 'worker-3' does not exist (helix nodes lists them)\n"
    code, out, err = _helix(helix_home, "nodes", "drain")
    assert code == 2
    assert "Missing argument 'NODE'" in err
