"""The configuration reader agrees with git itself on every entry of every file.

A reader that disagreed with git about where a value ends could be shown a harmless
key where git sees ``diff.x.textconv``; so each case, and a few thousand generated
ones, go through both ``config_entries`` and ``git config --file F --list -z``.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from helix.gates._builtin._git_config import ConfigSyntaxError, config_entries, executing_key

from ._support import GIT_ENV

CASES = [
    b"[core]\n\tfsmonitor = x\n",
    b'[diff "x"]\n a = b\\\n[core]\n textconv = evil\n',
    b"[core]fsmonitor=evil",
    b'[Core]\r\n  FSMonitor = "a;b" ; c\r\n',
    b"\xef\xbb\xbf[core]\nx=1\n",
    b"\xef\xbb[core]\nx=1\n",
    b"[diff.Evil]\ntextconv=x\n",
    b'[diff "a\\"b\\\\c"]\ncommand = "x\\ty\\n"\n',
    b"[a]\nb\n[c]\nd = \n",
    b'[a]\nb = "unterminated\n',
    b"[a]\nb = x\\q\n",
    b"k = v\n[a]b=c",
    b'[ "x"]\nk=v\n',
    b"[]\nk=v\n",
    b'[a "b" ]\n',
    b"[a\n]\n",
    b"[a]\n b = x # c \\\n d = e\n",
    b'[a]\n b = "x # c" \\\n d = e\n',
    b"[a]\n b = x\\\n  y  z  \n",
    b"[a]\n b\t=\ty\x00z\n",
    b'[diff "x.textconv\x00"]\n y = evil\n',
    b"[a]\n 1b = x\n",
    b"[a]\n b-c = x\n",
    b"[a]\n b_c = x\n",
    b"[a]\r b = x\n",
    b"[a]\n b = x\ry\n",
    b"[a]\x0b b = x\n",
    b"[a]\n b =\x0cx\n",
    b"[a] ; c\n b = x\n",
    b'[a]\n b = """x"\n',
    b"",
    b"\n\n  \t\n",
    b"[a]",
    b"[a]\nb",
    b"[a]\nb=x\\",
    b"[a]\nb  c\n",
    b'[a.B "C"]\nd=e\n',
    b'[alias]\n st = "  !sh"\n',
]


def _git(data: bytes, tmp_path: Path) -> list[tuple[str, str | None]] | None:
    path = tmp_path / "config"
    path.write_bytes(data)
    done = subprocess.run(
        ["git", "config", "--file", str(path), "--list", "-z"],
        env=GIT_ENV, cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return None
    found: list[tuple[str, str | None]] = []
    for item in done.stdout.split(b"\0")[:-1]:
        name, newline, value = item.partition(b"\n")
        text = value.decode("utf-8", errors="replace") if newline else None
        found.append((name.decode("utf-8", errors="replace"), text))
    return found


def _ours(data: bytes) -> list[tuple[str, str | None]] | None:
    try:
        return config_entries(data)
    except ConfigSyntaxError:
        return None


@pytest.mark.parametrize("data", CASES)
def test_the_reader_agrees_with_git(data: bytes, tmp_path: Path) -> None:
    assert _ours(data) == _git(data, tmp_path)


def test_the_reader_agrees_with_git_on_generated_files(tmp_path: Path) -> None:
    pieces = [
        b"[core]", b'[diff "x"]', b"[a.B]", b'[ "q"]', b" k = v", b"key", b'x="a;b"',
        b"y = a\\", b"\\", b'"', b"#c", b";c", b"\n", b"\r\n", b"\r", b" ", b"\t", b"=",
        b"\\n", b"\\t", b"\0", b"textconv=1", b'[x "a\\"b"]', b"\xef\xbb\xbf",
    ]  # fmt: skip
    rng = random.Random(12)
    for _ in range(600):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert _ours(data) == _git(data, tmp_path), data


@pytest.mark.parametrize(
    ("name", "value", "runs"),
    [
        ("core.fsmonitor", "false", True),
        ("diff.x.textconv", "cat", True),
        ("filter.lfs.process", "git-lfs filter-process", True),
        ("includeif.gitdir:/.path", "x", True),
        ("pager.log", None, True),
        ("alias.st", "!sh", True),
        ("alias.st", "status -s", False),
        ("submodule.lib.update", "!sh", True),
        ("user.name", "Ann", False),
        ("core.filemode", "true", False),
        ("remote.origin.url", "https://example.test/x.git", False),
    ],
)
def test_which_keys_run_programs(name: str, value: str | None, runs: bool) -> None:
    assert executing_key(name, value) is runs
