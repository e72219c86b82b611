"""The engineering pack passes the conformance suite every tool source passes, opened
through the ``PluginSource`` a run gets it from (as a development folder plugin)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helix.packs.engineering import plugin
from helix.plugins import Plugins, PluginSource, check_plugin
from helix.testing.conformance import SlowCall, ToolConformance, ToolSample

from ._repo import pack_folder

PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest"  # fast: no plugins
OUTPUT = "FAILED t.py::test_a - assert 1 == 2\n1 failed, 1 passed in 0.01s\n"


def _code(world: Path) -> None:
    (world / "a.py").write_text("def f():\n    return 0\n\n\nprint(f())\n")


def _tests(world: Path) -> None:
    (world / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (world / "slow_check.py").write_text(
        "import pathlib, time\n\n\ndef test_slow():\n"
        "    pathlib.Path('started').touch()\n    time.sleep(60)\n"
    )


class TestEngineeringPack(ToolConformance):
    samples = {
        "run_tests": ToolSample(
            args={"command": PYTEST},
            failing={"command": PYTEST, "paths": ["missing_test.py"]},
            slow=SlowCall(
                args={"command": PYTEST, "paths": ["slow_check.py"]},
                started=lambda world: (world / "started").exists(),
                leaves=frozenset({"started"}),
            ),
            prepare=_tests,
        ),
        "triage_failures": ToolSample(args={"output": OUTPUT}, failing={"junit_path": "no.xml"}),
        "search_code": ToolSample(
            args={"query": "f"}, failing={"query": "f", "path": "missing"}, prepare=_code
        ),
        "rename_symbol": ToolSample(
            args={"old": "f", "new": "g"}, failing={"old": "nope", "new": "g"}, prepare=_code
        ),
        "replace_function_body": ToolSample(
            args={"path": "a.py", "function": "f", "body": "return 1"},
            failing={"path": "a.py", "function": "nope", "body": "return 1"},
            prepare=_code,
        ),
        "deliver": ToolSample(
            args={"message": "m", "summary": "s"},
            failing={"message": "m", "summary": "s"},  # not the pack's worktree
            skip_call="deliver needs the worktree the pack makes for a run (test_engineering_e2e)",
        ),
    }

    @pytest.fixture
    def tool_source(self, tmp_path: Path) -> PluginSource:
        env = {"HELIX_PLUGINS": str(pack_folder(tmp_path / "found"))}
        return PluginSource(Plugins(home=tmp_path / "home", env=env), "engineering")


def test_the_declaration_keeps_the_contract() -> None:
    assert check_plugin(plugin, expected="engineering", helix_version="0.1.0") is plugin
    assert plugin.summary()["components"] == ["engineering.test_results", "engineering.diff"]
    assert plugin.prepare_world is not None


def test_the_entry_point_is_declared() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["helix.plugins"] == {
        "engineering": "helix.packs.engineering:plugin"
    }
    assert "libcst==1.9.0" in project["optional-dependencies"]["engineering"]
