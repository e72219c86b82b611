"""``helix plugins list|info|enable|disable``, as real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ._folders import simple, write_plugin


def helix(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    env = {
        **inherited,
        "HELIX_HOME": str(tmp_path / "home"),
        "HELIX_PLUGINS": str(tmp_path / "plugins"),
    }
    return subprocess.run(
        [sys.executable, "-m", "helix", "plugins", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _folders(tmp_path: Path) -> None:
    root = tmp_path / "plugins"
    write_plugin(root, "needy", simple("needy", requires=("store.vectors",)))
    write_plugin(root, "crashes", "raise ValueError('bad config')\n")


def test_list_shows_each_plugin_its_state_and_what_it_provides(tmp_path: Path) -> None:
    _folders(tmp_path)
    result = helix(tmp_path, "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    example = next(line for line in lines if line.startswith("example "))
    assert "entry point" in example
    assert "active" in example
    assert "tools count_words; gates example.no-secrets; components example.counts" in example
    needy = lines.index(next(line for line in lines if line.startswith("needy ")))
    assert "folder" in lines[needy]
    assert "inactive" in lines[needy]
    assert lines[needy + 1] == "  needs store.vectors, which no plugin provides"
    crashes = lines.index(next(line for line in lines if line.startswith("crashes ")))
    assert "failed" in lines[crashes]
    assert lines[crashes + 1] == "  plugin crashes: does not import: ValueError: bad config"

    as_json = helix(tmp_path, "list", "--json")
    rows = {row["name"]: row for row in map(json.loads, as_json.stdout.splitlines())}
    assert rows["needy"]["status"] == "inactive"
    assert rows["needy"]["requires"] == ["store.vectors"]
    assert rows["example"]["source"] == "entry_point"
    assert rows["example"]["provides"]["gates"] == ["example.no-secrets"]
    assert rows["crashes"]["version"] is None


def test_info_and_an_unknown_name(tmp_path: Path) -> None:
    _folders(tmp_path)
    result = helix(tmp_path, "info", "example")
    assert result.returncode == 0, result.stderr
    assert "status:     active" in result.stdout
    assert "tools:      count_words" in result.stdout
    shown = json.loads(helix(tmp_path, "info", "needy", "--json").stdout)
    assert shown["reason"] == "needs store.vectors, which no plugin provides"
    missing = helix(tmp_path, "info", "nope")
    assert missing.returncode == 3
    known = "known plugins are engineering, example, "
    assert missing.stderr.startswith(f"error: unknown plugin 'nope'; {known}")
    assert "Traceback" not in missing.stderr


def test_disable_and_enable_are_kept_under_helix_home(tmp_path: Path) -> None:
    _folders(tmp_path)
    off = helix(tmp_path, "disable", "example")
    assert (off.returncode, off.stdout) == (0, "example disabled\n")
    assert json.loads((tmp_path / "home" / "plugins.json").read_text()) == {"disabled": ["example"]}
    again = helix(tmp_path, "disable", "example")
    assert again.stdout == "example was disabled already\n"
    listed = helix(tmp_path, "list").stdout.splitlines()
    example = next(line for line in listed if line.startswith("example "))
    assert "disabled" in example
    assert "count_words" not in example
    on = helix(tmp_path, "enable", "example")
    assert (on.returncode, on.stdout) == (0, "example enabled\n")
    assert json.loads((tmp_path / "home" / "plugins.json").read_text()) == {"disabled": []}

    unknown = helix(tmp_path, "enable", "nope")
    assert unknown.returncode == 3
    assert "unknown plugin 'nope'" in unknown.stderr
    usage = helix(tmp_path, "disable")
    assert usage.returncode == 2
    assert "Missing argument 'NAME'" in usage.stderr


def test_a_damaged_switch_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "plugins.json").write_text("{not json")
    result = helix(tmp_path, "list")
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "plugins.json: cannot read the plugin switches" in result.stderr
    assert "Traceback" not in result.stderr
