"""The host's side of the remote tier: a node's answer is data to check, never to follow.

A command cannot make most of these (a name with ``/..`` in it), but whatever a node
answers crosses the boundary, so the host checks every row itself.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from helix.distributed import RayNodeSandbox
from helix.distributed._ray_sync import digest_of, take_back, walk
from helix.errors import ConfigError
from helix.runtime import Placement

FILE = stat.S_IFREG | 0o644
DIR = stat.S_IFDIR | 0o755
LINK = stat.S_IFLNK | 0o777


def _file(path: str, data: bytes, mode: int = FILE) -> tuple[str, int, int, str, str]:
    return (path, mode, len(data), digest_of(data), "")


def test_hostile_rows_are_refused_and_the_rest_written(tmp_path: Path) -> None:
    world = tmp_path / "world"
    (world / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (world / "into").symlink_to(outside)  # a link the world holds, to outside
    (world / ".helix").mkdir()
    (world / "gone.txt").write_text("bye")
    tree, _keys = walk(world, hidden=[world / ".helix"])
    assert ".helix" not in tree.manifest  # a hidden path is never sent
    good, evil = b"good\n", b"evil\n"
    rows = [
        _file("../x", evil),
        _file("/abs", evil),
        _file("sub/../../y", evil),
        _file("into/z", evil),  # through the link the world holds
        _file(".helix/db", evil),  # into a hidden path
        _file("setuid", good, stat.S_IFREG | 0o4755),
        ("lied.txt", FILE, 5, digest_of(b"other"), ""),  # content not its digest
        ("dev", stat.S_IFCHR | 0o600, 0, "", ""),
        ("abs-link", LINK, 4, digest_of(b"/etc"), "/etc"),
        ("up-link", LINK, 8, digest_of(b"../../up"), "../../up"),
        ("nofolder/a", FILE, 5, digest_of(good), ""),
        _file("sub/ok.txt", good),
        ("sub/near", LINK, 6, digest_of(b"ok.txt"), "ok.txt"),
        "not a row",
    ]
    contents = {digest_of(evil): evil, digest_of(good): good, digest_of(b"other"): b"lied!"}
    taken = take_back(
        world,
        tree.manifest,
        rows,
        ["gone.txt", "../../etc/passwd", "never-sent"],
        contents,
        hidden=[world / ".helix"],
    )
    refused = taken.refused
    for path in ("../x", "/abs", "sub/../../y"):
        assert refused[path].startswith("not a world path")
    assert refused["into/z"] == "its folder is not a folder the world keeps"
    assert refused[".helix/db"] == "a path hidden from commands"
    assert refused["lied.txt"] == "its content does not match its digest"
    assert refused["dev"] == "a special file (not a file, folder or link)"
    assert "outside the world" in refused["abs-link"]
    assert "outside the world" in refused["up-link"]
    assert refused["nofolder/a"] == "its folder is not a folder the world keeps"
    assert refused["?"] == "not a manifest row"
    assert sorted(taken.written) == ["setuid", "sub/near", "sub/ok.txt"]
    assert taken.removed == ["gone.txt"]
    assert (world / "sub" / "ok.txt").read_bytes() == good
    assert os.readlink(world / "sub" / "near") == "ok.txt"
    assert stat.S_IMODE((world / "setuid").stat().st_mode) == 0o755  # no set-id bits back
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "x").exists()
    assert not (tmp_path / "y").exists()
    assert list((world / ".helix").iterdir()) == []
    assert "refused '../x': not a world path" in "\n".join(taken.notes())


def test_content_past_the_quota_is_refused(tmp_path: Path) -> None:
    small, big = b"s" * 10, b"b" * 100
    taken = take_back(
        tmp_path,
        {},
        [_file("small", small), _file("big", big)],
        [],
        {digest_of(small): small, digest_of(big): big},
        max_bytes=50,
    )
    assert taken.written == ["small"]
    assert "past its quota" in taken.refused["big"]
    assert not (tmp_path / "big").exists()


def test_a_folder_the_world_holds_as_a_link_is_never_entered(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    sent, _keys = walk(world)
    (world / "d").symlink_to(outside)  # swapped in on the host after the manifest was sent
    data = b"x"
    rows = [("d", DIR, 0, "", ""), _file("d/f", data)]
    taken = take_back(world, sent.manifest, rows, [], {digest_of(data): data})
    assert "d" in taken.refused
    assert list(outside.iterdir()) == []


def test_a_placed_run_cannot_serve_mcp(tmp_path: Path) -> None:
    box = RayNodeSandbox(Placement(labels={"gpu": "yes"}), hidden=[])
    with pytest.raises(ConfigError, match="cannot start stdio MCP servers"):
        box.serve(["true"], cwd=tmp_path, env={})
