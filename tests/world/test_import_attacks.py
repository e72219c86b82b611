"""The world layer's own guards against recorded data that lies (an imported log, say).

Whatever an event or a manifest says, the object store joins only digests into paths,
a world is never ``/``, and a restore never follows a
link out of the world. Real files, real links, no mocks.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from helix.errors import ConfigError, InvalidObjectError
from helix.kernel.events import FileChanged, WorldEntry, WorldSnapshotted, path_problem
from helix.world import Entry, ObjectStore, Scanner, load_manifest, restore, world_root

FILE = stat.S_IFREG | 0o644
DIR = stat.S_IFDIR | 0o755


@pytest.fixture
def objects(tmp_path: Path) -> ObjectStore:
    return ObjectStore(tmp_path / "home" / "objects")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "x").write_text("the host's\n")
    return folder


@pytest.mark.parametrize(
    "name", ["xx/etc/shadow", "../../../../etc/shadow", "", "A" * 64, "ab" * 31 + "/x", "0" * 65]
)
def test_the_object_store_joins_only_digests_into_paths(objects: ObjectStore, name: str) -> None:
    for use in (objects.path, objects.has, objects.read):
        with pytest.raises(InvalidObjectError, match="not an object's name"):
            use(name)
    with pytest.raises(InvalidObjectError):
        objects.copy_to(name, objects.root.parent / "copy")


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("a/b.txt", None),
        ("a b/c-d_e.f", None),
        ("", "is empty"),
        ("/etc/shadow", "is absolute"),
        ("../x", "has a '..' component"),
        ("a/../../x", "has a '..' component"),
        ("./a", "has a '.' component"),
        ("a//b", "has an empty component"),
        ("a/", "has an empty component"),
        ("a\\..\\b", "holds a backslash"),
        ("a\0b", "holds a NUL byte"),
    ],
)
def test_world_paths_are_normalised_relative_paths(path: str, problem: str | None) -> None:
    assert path_problem(path) == problem
    entry = {"hash": "", "mode": DIR, "size": 0, "mtime_ns": 0}
    if problem is None:
        WorldSnapshotted(turn=0, changes={path: entry}, files=1, bytes_added=0, scanned=True)
    else:
        with pytest.raises(ValidationError, match="world path"):
            WorldSnapshotted(turn=0, changes={path: entry}, files=1, bytes_added=0, scanned=True)


def test_hashes_in_payloads_are_digests() -> None:
    with pytest.raises(ValidationError, match="not a SHA-256 digest"):
        WorldEntry(hash="xx/etc/shadow", mode=FILE, size=1, mtime_ns=0)
    with pytest.raises(ValidationError, match="not a SHA-256 digest"):
        FileChanged(call_id="c", path="a", op="modify", before="../../x", after=None)
    with pytest.raises(ValidationError, match="not a SHA-256 digest"):
        WorldSnapshotted(turn=0, base="../../etc", files=0, bytes_added=0, scanned=True)
    assert WorldEntry(hash="", mode=DIR, size=0, mtime_ns=0).hash == ""


def test_a_manifest_object_is_checked_when_loaded(objects: ObjectStore) -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    lies = [
        {"../../victim": [digest, FILE, 1, 0]},
        {"a": ["xx/etc/shadow", FILE, 1, 0]},
        {"a": [digest, "0", 1, 0]},
        {"a": [digest, FILE, 1]},
        ["not", "a", "manifest"],
    ]
    for lie in lies:
        name, _ = objects.put_bytes(json.dumps(lie).encode())
        with pytest.raises(InvalidObjectError, match="is not a manifest"):
            load_manifest(objects, name)
    name, _ = objects.put_bytes(b"\xff not json")
    with pytest.raises(InvalidObjectError, match="is not a manifest"):
        load_manifest(objects, name)


def test_a_world_is_never_the_filesystems_root(objects: ObjectStore, world: Path) -> None:
    (world / "file").write_text("not a folder\n")
    for bad in (Path("/"), Path("/etc/.."), world / "missing", world / "file"):
        with pytest.raises(ConfigError):
            world_root(bad)
        with pytest.raises(ConfigError):
            Scanner(bad, objects).scan({})
        with pytest.raises(ConfigError):
            restore(objects, {}, {}, bad)
    with pytest.raises(ConfigError, match="filesystem's root"):
        Scanner(Path("/"), None).refresh({}, ["etc/shadow"])
    assert world_root(world) == world.resolve()


def test_a_restore_never_removes_through_a_link(
    objects: ObjectStore, world: Path, outside: Path
) -> None:
    # The log says "a" is a folder holding "a/x"; on disk "a" is a link to a host folder.
    os.symlink(outside, world / "a")
    digest, _ = objects.put_bytes(b"the host's\n")
    current = {"a": Entry("", DIR, 0, 0), "a/x": Entry(digest, FILE, 11, 0)}
    done = restore(objects, current, {}, world)
    assert (outside / "x").read_text() == "the host's\n"
    assert done.removed == []
    assert list(done.conflicts) == ["a"]  # reported, and left for a person to look at
    assert (world / "a").is_symlink()


def test_a_restore_never_writes_through_a_link(
    objects: ObjectStore, world: Path, outside: Path
) -> None:
    os.symlink(outside, world / "a")
    digest, _ = objects.put_bytes(b"planted\n")
    lie = {"a": Entry("", DIR, 0, 0)}  # the log's view: "a" is a folder, as wanted
    target = {"a": Entry("", DIR, 0, 0), "a/y": Entry(digest, FILE, 8, 0)}
    done = restore(objects, lie, target, world)
    assert not (outside / "y").exists()
    assert list(done.conflicts) == ["a"]
    assert done.held(target) == {}


def test_a_malformed_target_is_refused_before_anything_changes(
    objects: ObjectStore, world: Path, outside: Path
) -> None:
    link, _ = objects.put_bytes(os.fsencode(outside))
    digest, _ = objects.put_bytes(b"planted\n")
    (world / "keep.txt").write_text("kept\n")
    current = {"keep.txt": Entry(hashlib.sha256(b"kept\n").hexdigest(), FILE, 5, 0)}
    # A link "a" to the host, then a file under it: written in depth order, "a/y" would
    # land in the host's folder.
    target = {"a": Entry(link, stat.S_IFLNK | 0o777, 4, 0), "a/y": Entry(digest, FILE, 8, 0)}
    with pytest.raises(InvalidObjectError, match="is not a folder in it"):
        restore(objects, current, target, world)
    assert not (outside / "y").exists()
    assert (world / "keep.txt").read_text() == "kept\n"


def test_a_name_with_a_backslash_is_left_out_and_reported(
    objects: ObjectStore, world: Path
) -> None:
    (world / "ok.txt").write_text("ok\n")
    (world / "..\\escape").write_text("odd\n")
    result = Scanner(world, objects).scan({})
    assert set(result.manifest) == {"ok.txt"}
    assert result.skipped == {"..\\escape": (4, "unsafe_name")}
