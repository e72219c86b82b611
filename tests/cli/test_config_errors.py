"""A model this machine cannot use is one clear line naming the fix, before any run exists."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from tests._cli import run_helix

MODEL = "anthropic:claude-sonnet-4-5"


_helix = partial(run_helix, drop=("HELIX_", "ANTHROPIC_", "OPENAI_"))


def _no_runs(home: Path) -> bool:
    listed = _helix(home, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return [json.loads(line) for line in listed.stdout.splitlines()] == []


def test_a_missing_key_names_the_variable_once(tmp_path: Path, helix_home: Path) -> None:
    home = helix_home  # apart from the world (tmp_path), which may not hold it
    result = _helix(home, "run", "hello", "--model", MODEL, "--dir", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr == "error: anthropic needs an API key: set ANTHROPIC_API_KEY\n"
    assert result.stdout == ""
    assert _no_runs(home)


def test_a_missing_extra_names_the_install_command(tmp_path: Path, helix_home: Path) -> None:
    home = helix_home  # apart from the world (tmp_path), which may not hold it
    result = _helix(
        home, "run", "hello", "--model", MODEL, "--dir", str(tmp_path),
        prelude="import sys; sys.modules['anthropic'] = None  # the extra is not installed",
        ANTHROPIC_API_KEY="sk-test",
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "error: this model needs the 'anthropic' package: pip install 'helix-harness[anthropic]'\n"
    )
    assert "Traceback" not in result.stderr
    assert _no_runs(home)
