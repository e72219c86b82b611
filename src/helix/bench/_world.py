"""``helix bench world``: what recording a run's world costs, against git and ``cp -a``.

A world of 10,000 files (1 KiB each, in 100 folders, last modified an hour ago) where
one file changes per turn. Each turn's snapshot is measured the way the engine takes
it, log append included: after a shell command (the world is walked, unchanged files
keep their hashes) and after ``write_file`` (only the reported path is read). The
baseline is ``git add -A && git commit`` of the same change in a git copy of the same
world, in the same run. Materialising a fork is compared with ``cp -a`` of the world.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from helix.kernel.events import NewEvent, RunCreated
from helix.kernel.log import SqliteEventStore
from helix.world import ObjectStore, WorldRecorder, materialize

from ._figure import Figure

SUITE = "world"


@dataclass(frozen=True, slots=True)
class WorldSizes:
    """How big the world is and how many turns are measured."""

    files: int = 10_000
    folders: int = 100
    file_bytes: int = 1024
    turns: int = 30
    forks: int = 3

    @classmethod
    def quick(cls) -> WorldSizes:
        """A smoke test's sizes."""
        return cls(files=200, folders=10, turns=3, forks=1)


def _make_world(root: Path, sizes: WorldSizes) -> list[Path]:
    files = []
    past = time.time_ns() - 3600 * 10**9
    for index in range(sizes.files):
        folder = root / f"pkg{index % sizes.folders:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"module{index:05d}.py"
        line = f"# module {index}: " + "x" * 60 + "\n"
        path.write_text((line * (sizes.file_bytes // len(line) + 1))[: sizes.file_bytes])
        os.utime(path, ns=(past, past))
        files.append(path)
    return files


def _change(path: Path, turn: int, size: int) -> int:
    text = f"# changed at turn {turn}\n"
    data = (text * (size // len(text) + 1))[:size]
    path.write_text(data)
    return len(data.encode())


def _make_worlds(world: Path, mirror: Path, sizes: WorldSizes) -> list[Path]:
    """The world, and a git repository holding a copy of it, committed."""
    files = _make_world(world, sizes)
    subprocess.run(["cp", "-a", str(world), str(mirror)], check=True)
    _git(mirror, "init", "-q")
    _git(mirror, "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    _git(mirror, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start")
    return files


def _git(world: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=world, check=True, capture_output=True)


async def run_world(sizes: WorldSizes, workdir: Path | None = None) -> AsyncIterator[Figure]:
    """Measure per-turn snapshots (walked and reported), their bytes, and fork copies."""
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-world-") as tmp:
        root = Path(tmp)
        world = root / "world"
        mirror = root / "git-world"
        files = await asyncio.to_thread(_make_worlds, world, mirror, sizes)
        store = SqliteEventStore(root / "helix.db")
        objects = ObjectStore(root / "objects")
        try:
            async for figure in _measure(sizes, world, mirror, files, store, objects, root):
                yield figure
        finally:
            await store.close()


async def _measure(
    sizes: WorldSizes,
    world: Path,
    mirror: Path,
    files: list[Path],
    store: SqliteEventStore,
    objects: ObjectStore,
    root: Path,
) -> AsyncIterator[Figure]:
    created = RunCreated(objective="bench", model="scripted:bench", world=str(world))
    record = await store.create_run(created)
    recorder = WorldRecorder(store, record.id, world, objects)
    head = record.next_seq

    async def snapshot(turn: int, paths: list[str] | None) -> tuple[float, int]:
        nonlocal head
        started = time.perf_counter()
        events = await recorder.snapshot(turn, paths)
        head = await store.append(record.id, events, expected_seq=head)
        elapsed = (time.perf_counter() - started) * 1000
        stored = sum(_stored_bytes(e) for e in events)
        return elapsed, stored

    initial_ms, _ = await snapshot(0, None)
    params = {"files": sizes.files, "file_bytes": sizes.file_bytes, "turns": sizes.turns}
    watched: list[float] = []
    walked: list[float] = []
    reported: list[float] = []
    git: list[float] = []
    added: list[int] = []
    changed: list[int] = []
    for turn in range(1, sizes.turns + 1):
        target = files[(turn * 7919) % len(files)]
        rel = target.relative_to(world).as_posix()
        # After a shell command (the watcher names the change), after write_file (the
        # tool reports it), and after a shell command once the watcher lost track.
        for i, (paths, into) in enumerate(((None, watched), ([rel], reported), (None, walked))):
            size = _change(target, turn * 3 + i, sizes.file_bytes)
            if into is walked:
                recorder.close()  # as after a folder was created: walk, then watch anew
            ms, stored = await snapshot(turn, paths)
            into.append(ms)
            if into is watched:
                added.append(stored)
                changed.append(size)
            twin = mirror / rel
            _change(twin, turn * 3 + i, sizes.file_bytes)
            started = time.perf_counter()
            await asyncio.to_thread(_git_commit, mirror)
            git.append((time.perf_counter() - started) * 1000)
    git_ms = statistics.median(git)
    yield Figure(SUITE, "snapshot_initial", initial_ms, "ms", {"files": sizes.files})
    yield Figure(SUITE, "snapshot_turn", statistics.median(watched), "ms",
                 {**params, "after": "run_command (inotify names what changed)"},
                 git_ms)  # fmt: skip
    yield Figure(SUITE, "snapshot_turn_walked", statistics.median(walked), "ms",
                 {**params, "after": "run_command, the watcher having lost track (a walk)"},
                 git_ms)  # fmt: skip
    yield Figure(SUITE, "snapshot_turn_reported", statistics.median(reported), "ms",
                 {**params, "after": "write_file (the reported path is read)"}, git_ms)  # fmt: skip
    yield Figure(SUITE, "snapshot_bytes_per_turn", statistics.mean(added), "bytes",
                 {**params, "counts": "new objects + the event's JSON"},
                 statistics.mean(changed))  # fmt: skip
    manifest = await recorder.manifest()
    copies: list[float] = []
    baseline: list[float] = []
    for index in range(sizes.forks):
        dest = root / f"fork{index}"
        started = time.perf_counter()
        await asyncio.to_thread(materialize, objects, manifest, dest)
        copies.append((time.perf_counter() - started) * 1000)
        plain = root / f"copy{index}"
        started = time.perf_counter()
        await asyncio.to_thread(subprocess.run, ["cp", "-a", str(world), str(plain)], check=True)
        baseline.append((time.perf_counter() - started) * 1000)
        shutil.rmtree(dest)
        shutil.rmtree(plain)
    yield Figure(SUITE, "fork_materialize", statistics.median(copies), "ms",
                 {"files": sizes.files, "forks": sizes.forks},
                 statistics.median(baseline))  # fmt: skip


def _git_commit(mirror: Path) -> None:
    _git(mirror, "add", "-A")
    _git(mirror, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "turn")


def _stored_bytes(event: NewEvent) -> int:
    payload = event.payload
    data = payload.model_dump()
    return int(data.get("bytes_added", 0)) + len(payload.model_dump_json())
