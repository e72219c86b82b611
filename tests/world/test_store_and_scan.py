"""The object store, the scanner (hash reuse, ignore rules, size limit) and restores."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from helix.errors import NotFoundError
from helix.world import (
    Entry,
    IgnoreRules,
    ObjectStore,
    Scanner,
    content_delta,
    delta,
    load_manifest,
    materialize,
    restore,
    save_manifest,
)


@pytest.fixture
def objects(tmp_path: Path) -> ObjectStore:
    return ObjectStore(tmp_path / "objects")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    root.mkdir()
    return root


def _age(path: Path, seconds: float = 10.0) -> None:
    """Backdate a file so its mtime can be trusted by the next scan."""
    past = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(past, past))


def test_objects_are_stored_once_read_only_and_copied(objects: ObjectStore, tmp_path: Path) -> None:
    digest, added = objects.put_bytes(b"hello\n")
    assert added == 6
    assert objects.put_bytes(b"hello\n") == (digest, 0)
    assert objects.read(digest) == b"hello\n"
    assert stat.S_IMODE(objects.path(digest).stat().st_mode) == 0o444
    assert objects.path(digest).parent.name == digest[:2]
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(3 * 1024 * 1024))
    big_digest, big_added = objects.put_file(big, big.stat().st_size)
    assert big_added == 3 * 1024 * 1024
    assert objects.put_file(big, big.stat().st_size) == (big_digest, 0)
    copy = tmp_path / "copy.bin"
    objects.copy_to(big_digest, copy)
    assert copy.read_bytes() == big.read_bytes()
    assert copy.stat().st_ino != objects.path(big_digest).stat().st_ino
    assert not list((objects.root / "tmp").iterdir())  # no temporary left behind
    with pytest.raises(NotFoundError, match="missing"):
        objects.read("0" * 64)


def test_a_scan_reuses_hashes_of_unchanged_files(
    objects: ObjectStore, world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (world / "src").mkdir()
    for name in ("a.txt", "src/b.txt"):
        (world / name).write_text(name)
        _age(world / name)
    scanner = Scanner(world, objects)
    first = scanner.scan({})
    assert set(first.manifest) == {"a.txt", "src", "src/b.txt"}
    assert first.manifest["src"].is_dir
    assert first.bytes_added == len("a.txt") + len("src/b.txt")

    reads: list[Path] = []
    real = objects.put_file

    def counting(path: Path, size: int) -> tuple[str, int]:
        reads.append(path)
        return real(path, size)

    monkeypatch.setattr(objects, "put_file", counting)
    again = scanner.scan(first.manifest)
    assert reads == []  # nothing read: sizes and mtimes vouch for the content
    assert again.manifest == first.manifest

    (world / "a.txt").write_text("A.txt")  # same size, new content
    _age(world / "a.txt", 5)
    changed = scanner.scan(first.manifest)
    assert reads == [world / "a.txt"]
    assert delta(first.manifest, changed.manifest).keys() == {"a.txt"}
    assert objects.read(changed.manifest["a.txt"].hash) == b"A.txt"


def test_a_file_too_recent_to_trust_is_read_again(objects: ObjectStore, world: Path) -> None:
    (world / "fresh.txt").write_text("one")
    scanner = Scanner(world, objects)
    first = scanner.scan({})
    assert first.manifest["fresh.txt"].mtime_ns == -1
    (world / "fresh.txt").write_text("two")  # same size, maybe the same mtime tick
    second = scanner.scan(first.manifest)
    assert objects.read(second.manifest["fresh.txt"].hash) == b"two"


def test_ignore_rules_follow_gitignore(world: Path) -> None:
    (world / ".gitignore").write_text(
        "# build output\n*.log\nbuild/\n/top.txt\n!keep.log\ndocs/**/*.tmp\n"
    )
    (world / ".helixignore").write_text("secrets\n")
    rules = IgnoreRules.for_world(world)
    assert rules.ignored("x.log", False)
    assert rules.ignored("a/b/x.log", False)
    assert not rules.ignored("keep.log", False)
    assert rules.ignored("build", True)
    assert not rules.ignored("build", False)
    assert rules.ignored("top.txt", False)
    assert not rules.ignored("sub/top.txt", False)
    assert rules.ignored("docs/a/b/c.tmp", False)
    assert rules.ignored("docs/c.tmp", False)
    assert rules.ignored("secrets", True)
    assert rules.ignored("deep/secrets", False)
    assert rules.ignored(".git", True)
    assert rules.ignored_with_parents("build/out/x.o", False)
    assert not rules.ignored_with_parents("src/x.o", False)


def test_a_scan_leaves_out_ignored_and_oversized_files(objects: ObjectStore, world: Path) -> None:
    (world / ".gitignore").write_text("node_modules/\n")
    (world / "node_modules" / "pkg").mkdir(parents=True)
    (world / "node_modules" / "pkg" / "index.js").write_text("x")
    (world / ".git").mkdir()
    (world / ".git" / "HEAD").write_text("ref")
    (world / "huge.bin").write_bytes(b"\0" * 2048)
    (world / "ok.txt").write_text("ok")
    os.mkfifo(world / "pipe")
    result = Scanner(world, objects, max_file_bytes=1024).scan({})
    assert set(result.manifest) == {".gitignore", "ok.txt"}
    assert result.skipped == {"huge.bin": (2048, "too_large"), "pipe": (0, "not_regular")}


def test_refresh_reads_only_the_named_paths(objects: ObjectStore, world: Path) -> None:
    (world / "a.txt").write_text("a")
    scanner = Scanner(world, objects)
    base = scanner.scan({}).manifest
    (world / "new" / "deep").mkdir(parents=True)
    (world / "new" / "deep" / "b.txt").write_text("b")
    (world / "unreported.txt").write_text("not named, not seen")
    (world / "a.txt").unlink()
    result = scanner.refresh(base, ["new/deep/b.txt", "a.txt"])
    changes = result.changes(base)
    assert set(changes) == {"new", "new/deep", "new/deep/b.txt", "a.txt"}
    assert changes["a.txt"] is None
    assert changes["new"] is not None
    assert changes["new"].is_dir


def test_manifests_round_trip_through_the_store(objects: ObjectStore) -> None:
    manifest = {"a": Entry("ab" * 32, 0o100644, 3, 12), "d": Entry("", 0o40755, 0, 0)}
    digest, added = save_manifest(objects, manifest)
    assert added > 0
    assert load_manifest(objects, digest) == manifest
    assert save_manifest(objects, dict(reversed(manifest.items())))[0] == digest


def _tree(root: Path) -> dict[str, tuple[int, bytes]]:
    found: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        mode = path.lstat().st_mode
        if path.is_symlink():
            content = os.readlink(path).encode()
        elif path.is_dir():
            content = b""
        else:
            content = path.read_bytes()
        found[path.relative_to(root).as_posix()] = (mode, content)
    return found


def test_restore_brings_back_content_modes_links_and_removes_the_rest(
    objects: ObjectStore, world: Path, tmp_path: Path
) -> None:
    (world / "src").mkdir()
    (world / "src" / "main.py").write_text("print('v1')\n")
    (world / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(world / "run.sh", 0o755)
    os.symlink("src/main.py", world / "link")
    (world / "empty").mkdir()
    scanner = Scanner(world, objects)
    snapshot = scanner.scan({}).manifest
    before = _tree(world)

    (world / "src" / "main.py").write_text("print('v2')\n")
    os.chmod(world / "run.sh", 0o600)
    (world / "link").unlink()
    (world / "link").write_text("now a file")
    (world / "empty").rmdir()
    (world / "later").mkdir()
    (world / "later" / "x.txt").write_text("x")
    now = scanner.scan(snapshot).manifest
    done = restore(objects, now, snapshot, world)
    assert _tree(world) == before
    assert done.removed == ["later", "later/x.txt"]
    assert {"src/main.py", "run.sh", "link"} <= set(done.restored)
    assert content_delta(scanner.scan(snapshot).manifest, snapshot) == {}

    copy = tmp_path / "copy"
    materialize(objects, snapshot, copy)
    assert _tree(copy) == before
    assert scanner.scan({}).manifest.keys() == Scanner(copy, objects).scan({}).manifest.keys()


def test_restore_with_missing_content_changes_nothing(objects: ObjectStore, world: Path) -> None:
    (world / "a.txt").write_text("a")
    current = Scanner(world, objects).scan({}).manifest
    target = {"b.txt": Entry("f" * 64, 0o100644, 1, 0)}
    with pytest.raises(NotFoundError):
        restore(objects, current, target, world)
    assert (world / "a.txt").read_text() == "a"
    assert not (world / "b.txt").exists()
