"""The world watcher: file changes named by the kernel, tree changes mean a walk."""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.kernel.events import RunCreated
from helix.kernel.log import MemoryEventStore
from helix.world import ObjectStore, Scanner, WorldRecorder
from helix.world._watch import WorldWatcher


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    (root / "src" / "deep").mkdir(parents=True)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\n")
    for name in ("a.txt", "src/b.txt", "src/deep/c.txt"):
        (root / name).write_text(name)
    return root


@pytest.fixture
def watcher(world: Path) -> Iterator[WorldWatcher]:
    started = WorldWatcher.start(world)
    assert started is not None, "inotify is missing: these machines are Linux"
    yield started
    started.close()


def test_file_changes_are_named(world: Path, watcher: WorldWatcher) -> None:
    assert watcher.changes() == set()
    (world / "a.txt").write_text("changed")
    (world / "src" / "new.txt").write_text("new")
    (world / "src" / "deep" / "c.txt").unlink()
    (world / "src" / "b.txt").rename(world / "src" / "renamed.txt")
    (world / "a.txt").chmod(0o600)
    (world / "link").symlink_to("a.txt")
    assert watcher.changes() == {
        "a.txt", "src/new.txt", "src/deep/c.txt", "src/b.txt", "src/renamed.txt", "link"
    }  # fmt: skip
    assert watcher.changes() == set()  # handed over once


def test_ignored_folders_are_not_watched(world: Path, watcher: WorldWatcher) -> None:
    (world / "node_modules" / "pkg" / "index.js").write_text("x")
    assert watcher.changes() == set()


@pytest.mark.parametrize(
    "reshape",
    [
        lambda w: (w / "src" / "newdir").mkdir(),
        lambda w: shutil.rmtree(w / "src" / "deep"),
        lambda w: (w / "src").rename(w / "source"),
        lambda w: (w / "src").chmod(0o700),
    ],
    ids=["mkdir", "rmtree", "rename-folder", "chmod-folder"],
)
def test_a_change_of_shape_means_it_lost_track(
    world: Path, watcher: WorldWatcher, reshape: object
) -> None:
    assert callable(reshape)
    reshape(world)
    assert watcher.changes() is None
    assert watcher.lost


async def test_watched_snapshots_read_only_what_changed_and_match_a_walk(
    tmp_path: Path, world: Path
) -> None:
    store = MemoryEventStore()
    record = await store.create_run(RunCreated(objective="o", model="m", world=str(world)))
    objects = ObjectStore(tmp_path / "objects")
    recorder = WorldRecorder(store, record.id, world, objects)
    seq = 1
    events = await recorder.snapshot(0)
    await store.append(record.id, events, expected_seq=seq)
    seq += len(events)
    files = [world / n for n in ("a.txt", "src/b.txt", "src/deep/c.txt")]
    chooser = random.Random(7)
    for turn in range(1, 30):
        target = chooser.choice(files)
        match chooser.randrange(4):
            case 0:
                target.write_text(f"turn {turn}")
            case 1:
                target.unlink(missing_ok=True)
            case 2:
                target.write_bytes(os.urandom(64))
                target.chmod(0o640)
            case _:
                (target.parent / f"t{turn}.txt").write_text(str(turn))
        events = await recorder.snapshot(turn)  # asked to walk: the watcher answers
        await store.append(record.id, events, expected_seq=seq)
        seq += len(events)
        walked = Scanner(world, None).scan({}).manifest
        recorded = await recorder.manifest()
        assert {p: (e.hash, e.mode, e.size) for p, e in recorded.items()} == {
            p: (e.hash, e.mode, e.size) for p, e in walked.items()
        }, turn
    assert recorder.walks == 1  # only the first snapshot walked
    (world / "src" / "fresh").mkdir()
    await recorder.snapshot(30)
    assert recorder.walks == 2  # a new folder: walked once, and watched anew
    recorder.close()
