"""Rollback, forks and keep never follow a link (or write into a hard link) out of the world.

The attacks are played for real: a run (real engine, SQLite log, process sandbox,
scripted model) writes ``d/x``, hides ``d`` with a ``.helixignore``, then swaps ``d``
for a symbolic link to a folder outside the world, which stands for the person's files.
A later rollback, or keep, must leave that folder exactly as it was (content, modes and
times) and report the conflict. ``host`` is a folder beside the world.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from helix.errors import InvalidObjectError
from helix.kernel.events import NewEvent, TurnEnded, WorldSnapshotted
from helix.runtime import fork_with_world, keep, rollback
from helix.world import Entry, ObjectStore, Scanner, materialize, restore, save_manifest

from .conftest import Harness, _call

Tree = dict[str, tuple[int, bytes, int]]


def _host(root: Path) -> Path:
    """A folder outside the world holding someone's files, with modes and old times."""
    host = root / "host"
    host.mkdir()
    (host / "x").write_text("the person's file\n")
    (host / "notes.txt").write_text("notes\n")
    os.chmod(host / "x", 0o640)
    os.chmod(host, 0o750)
    past = time.time_ns() - 3600 * 10**9
    for path in (host / "x", host / "notes.txt", host):
        os.utime(path, ns=(past, past))
    return host


def _tree(root: Path) -> Tree:
    """Every path under ``root`` (and ``root`` itself): mode, content, mtime."""
    found: Tree = {".": (root.lstat().st_mode, b"", root.lstat().st_mtime_ns)}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        content = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        found[path.relative_to(root).as_posix()] = (st.st_mode, content, st.st_mtime_ns)
    return found


async def _hiding_run(h: Harness, host: Path) -> str:
    """Write d/x; ignore d; swap d for a link to ``host`` (through a shell command)."""
    return await h.run(
        {"text": "write", "tool_calls": [_call("write_file", path="d/x", content="agent\n")]},
        {"text": "hide", "tool_calls": [_call("write_file", path=".helixignore", content="d\n")]},
        {
            "text": "swap",
            "tool_calls": [_call("run_command", command=f"rm -r d && ln -s '{host}' d")],
        },
        {"text": "done"},
    )


async def test_rollback_leaves_a_hidden_link_to_a_host_folder_alone(harness: Harness) -> None:
    h = harness
    host = _host(h.root)
    before = _tree(host)
    run_id = await _hiding_run(h, host)
    assert (h.world / "d").is_symlink()

    marker = await rollback(h.engine, run_id, 1, by="user:test")

    assert _tree(host) == before  # content, modes and times: nothing written through d
    assert [c.path for c in marker.conflicts] == ["d"]
    assert f"a symbolic link to '{host}'" in marker.conflicts[0].detail
    assert "nothing under it is written" in marker.conflicts[0].detail
    assert (h.world / "d").is_symlink()  # left as it is, for the person to look at
    assert not (h.world / ".helixignore").exists()  # the rest was restored
    (event,) = [e for e in await h.engine.store.read(run_id) if e.type == "world.rolled_back"]
    assert event.data["conflicts"] == [{"path": "d", "detail": marker.conflicts[0].detail}]
    # The recorded manifest is what the world holds: d/x was not restored.
    assert "d/x" not in {i.path for i in await h.browser.files(run_id, at="last")}


async def test_keep_does_not_write_through_a_link_in_the_original(harness: Harness) -> None:
    h = harness
    host = _host(h.root)
    before = _tree(host)
    run_id = await _hiding_run(h, host)
    fork = await fork_with_world(h.engine, run_id, 1)
    assert (Path(fork.world) / "d" / "x").read_text() == "agent\n"

    kept = await keep(h.engine, fork.id, by="user:test")

    assert _tree(host) == before
    assert [c.path for c in kept.conflicts] == ["d"]
    (event,) = [e for e in await h.engine.store.read(run_id) if e.type == "world.kept"]
    assert [c["path"] for c in event.data["conflicts"]] == ["d"]


async def test_rollback_replaces_a_hard_link_to_a_host_file(harness: Harness) -> None:
    h = harness
    host = _host(h.root)
    (host / "same").write_text("shared\n")
    past = time.time_ns() - 7200 * 10**9
    os.utime(host / "same", ns=(past, past))
    (h.world / "f").write_text("shared\n")  # same content and mode, other times
    (h.world / "g").write_text("the world's g\n")
    recorded = time.time_ns() - 1800 * 10**9
    os.utime(h.world / "f", ns=(recorded, recorded))
    before = _tree(host)
    run_id = await h.run(
        {
            "text": "link",
            "tool_calls": [
                _call("run_command", command=f"ln -f '{host}/same' f && ln -f '{host}/x' g")
            ],
        },
        {"text": "done"},
    )
    assert os.stat(h.world / "f").st_ino == os.stat(host / "same").st_ino

    await rollback(h.engine, run_id, "start", by="user:test")

    assert _tree(host) == before  # neither content nor times changed through the links
    assert (h.world / "g").read_text() == "the world's g\n"
    assert (h.world / "f").read_text() == "shared\n"
    assert (h.world / "f").stat().st_mtime_ns == recorded
    for name in ("f", "g"):
        assert os.stat(h.world / name).st_nlink == 1  # new files, not the host's inodes


# Restores below the runtime: what a process still running in the world can do after
# the pre-restore scan (swap a folder or a file for a link), and manifests that hold
# paths under a link.


@pytest.fixture
def objects(tmp_path: Path) -> ObjectStore:
    return ObjectStore(tmp_path / "objects")


def test_a_link_planted_after_the_scan_is_replaced_not_followed(
    objects: ObjectStore, tmp_path: Path
) -> None:
    host = _host(tmp_path)
    world = tmp_path / "world"
    (world / "d").mkdir(parents=True)
    (world / "d" / "x").write_text("agent\n")
    (world / "f").write_text("the person's file\n")  # the content of host/x
    old = time.time_ns() - 60 * 10**9
    os.utime(world / "f", ns=(old, old))
    target = Scanner(world, objects).scan({}).manifest
    (world / "d" / "x").write_text("changed\n")
    os.utime(world / "f", ns=(old + 10**9, old + 10**9))
    current = Scanner(world, objects).scan(target).manifest
    before = _tree(host)
    # After the scan, d becomes a link to the host folder and f one to a host file.
    (world / "d" / "x").unlink()
    (world / "d").rmdir()
    os.symlink(host, world / "d")
    (world / "f").unlink()
    os.symlink(host / "x", world / "f")

    done = restore(objects, current, target, world)

    assert _tree(host) == before
    assert list(done.conflicts) == ["d"]
    assert "a symbolic link" in done.conflicts["d"]
    assert not (world / "f").is_symlink()
    assert (world / "f").read_text() == "the person's file\n"
    assert (world / "f").stat().st_mtime_ns == old


def test_a_manifest_with_a_file_under_a_link_is_not_written_through(
    objects: ObjectStore, tmp_path: Path
) -> None:
    host = _host(tmp_path)
    before = _tree(host)
    link, _ = objects.put_bytes(os.fsencode(host))
    data, _ = objects.put_bytes(b"agent\n")
    manifest = {
        "d": Entry(link, 0o120777, len(os.fsencode(host)), 0),
        "d/x": Entry(data, 0o100644, 6, 0),
        "ok.txt": Entry(data, 0o100600, 6, 0),
    }

    # No scan records a path under a link: such a manifest is refused before any write.
    with pytest.raises(InvalidObjectError, match="'d', the folder of 'd/x', is not a folder"):
        materialize(objects, manifest, tmp_path / "fork")

    assert _tree(host) == before
    assert not (tmp_path / "fork" / "ok.txt").exists()


async def test_a_fork_whose_world_cannot_be_made_is_refused(harness: Harness) -> None:
    h = harness
    host = _host(h.root)
    before = _tree(host)
    (h.world / "a.txt").write_text("a\n")
    run_id = await h.run({"text": "done"})
    objects = h.engine.objects
    link, _ = objects.put_bytes(os.fsencode(host))
    data, _ = objects.put_bytes(b"agent\n")
    bad = {"d": Entry(link, 0o120777, 1, 0), "d/x": Entry(data, 0o100644, 6, 0)}
    digest, _ = save_manifest(objects, bad)
    record = await h.engine.store.get_run(run_id)
    # A turn whose recorded world holds a file under a link (no scan records that).
    given = WorldSnapshotted(turn=2, base=digest, files=2, bytes_added=0, scanned=False)
    events = [NewEvent(given, turn=2), NewEvent(TurnEnded(turn=2), turn=2)]
    await h.engine.store.append(run_id, events, expected_seq=record.next_seq)

    with pytest.raises(InvalidObjectError, match="is not a folder in it"):
        await fork_with_world(h.engine, run_id, 2)

    assert _tree(host) == before
    worlds = h.engine.home / "worlds"
    assert not worlds.exists() or not any(worlds.iterdir())  # the half-made world is gone
    assert [r.id for r in (await h.engine.store.list_runs()).runs] == [run_id]


def test_a_path_under_a_link_is_not_read_into_the_store(
    objects: ObjectStore, tmp_path: Path
) -> None:
    host = _host(tmp_path)
    world = tmp_path / "world"
    world.mkdir()
    os.symlink(host, world / "d")
    scanner = Scanner(world, objects)
    previous = scanner.scan({}).manifest
    assert previous["d"].is_link  # the link itself, not its files
    assert "d/x" not in previous

    # A path named under the link (as a watcher or a tool report could) is not in the world.
    result = scanner.refresh(previous, ["d/x"])

    assert result.manifest == {}
    assert result.removed == {"d/x"}
    host_digest, _ = ObjectStore(tmp_path / "other").put_bytes((host / "x").read_bytes())
    assert not objects.has(host_digest)
