"""A microVM box checkpointed and restored: open files, ``/tmp``, a moved world; bad images.

The shared suite (``test_microvm_live``) already checks that a counter in a background
server counts on after a restore from a moved image. Here: what the guest had open in
the world goes on through Helix's 9p share after a restore onto a copy of the world in
another place; and images that are damaged, forged or of another machine are refused
with a clear error before anything starts.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import LiveWorld, MicrovmSandbox
from helix.sandbox._microvm_accel import guest_image, qemu_binary
from helix.sandbox._microvm_image import default_microvm_dir
from helix.sandbox._microvm_template import template_key
from helix.testing import processes_mentioning
from tests.conftest import microvm_tier

pytestmark = microvm_tier

WRITER = """\
import os, sys, time
log = open("log.txt", "a", buffering=1)  # open across the checkpoint
print("before", file=log)
with open("/tmp/mine", "w") as f:
    f.write("kept in the guest's memory")
print("ready", flush=True)
while not os.path.exists("go"):
    time.sleep(0.05)
print("after", open("/tmp/mine").read(), file=log)
print("done", flush=True)
"""


async def _until_said(live: LiveWorld, text: str) -> None:
    for _ in range(1200):
        page = await live.output("p1", max_bytes=4096)
        if text in page.text:
            return
        assert page.running, page.text
        await asyncio.sleep(0.05)
    raise AssertionError(f"p1 never said {text!r}")


async def test_open_files_and_tmp_go_on_in_a_world_moved_elsewhere(
    microvm_available: None, tmp_path: Path
) -> None:
    sandbox = MicrovmSandbox(memory_bytes=512 << 20)
    world = tmp_path / "world"
    world.mkdir()
    (world / "writer.py").write_text(WRITER)
    live = LiveWorld(await sandbox.open_box(cwd=world))
    try:
        await live.start("p1", "exec python3 writer.py")
        await _until_said(live, "ready")
        image = await live.box.checkpoint(tmp_path / "image")
    finally:
        await live.close()
    assert image.tier == "microvm"
    assert image.size_bytes > 0
    assert sorted(p.name for p in image.path.iterdir()) == ["box.json", "memory"]
    assert "kept in the guest" not in (image.path / "box.json").read_text()

    moved = tmp_path / "moved"  # the world as another node would have it
    shutil.copytree(world, moved, symlinks=True)
    shutil.rmtree(world)
    restored = LiveWorld(await sandbox.open_box(cwd=moved, restore=image.path))
    try:
        (moved / "go").write_text("")
        await _until_said(restored, "done")
    finally:
        await restored.close()
    assert (moved / "log.txt").read_text() == "before\nafter kept in the guest's memory\n"


@pytest.fixture
def image(tmp_path: Path) -> Path:
    """A folder shaped as a checkpoint image, its ``box.json`` written by each test."""
    folder = tmp_path / "image"
    folder.mkdir()
    (folder / "memory").write_bytes(b"not a migration stream")
    return folder


def _box_file(image: Path, **fields: object) -> None:
    found = {"format": 1, "shape": "0" * 20, "shares": {"usr": {}, "world": {}}, **fields}
    (image / "box.json").write_text(json.dumps(found))


async def _restore(image: Path, world: Path) -> None:
    """Restore ``image``, which must be refused, leaving no QEMU behind."""
    before = set(processes_mentioning("helix-microvm-"))
    try:
        box = await MicrovmSandbox(memory_bytes=256 << 20).open_box(cwd=world, restore=image)
        await box.close()
        raise AssertionError("a bad image was restored")
    finally:
        left = set(processes_mentioning("helix-microvm-")) - before
        assert not left, f"a refused image left QEMU running: {left}"


async def test_an_image_without_its_files_is_refused(
    microvm_available: None, image: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="not a microvm checkpoint image"):
        await _restore(image, tmp_path)  # no box.json
    (image / "elsewhere.json").write_text("{}")
    (image / "box.json").symlink_to(image / "elsewhere.json")
    with pytest.raises(ConfigError, match="not a microvm checkpoint image"):
        await _restore(image, tmp_path)  # a link is not followed


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"format": 2, "shape": "x", "shares": {}}', '{"format": 1, "shape": 5}'],
)
async def test_a_damaged_box_file_is_refused(
    microvm_available: None, image: Path, tmp_path: Path, text: str
) -> None:
    (image / "box.json").write_text(text)
    with pytest.raises(ConfigError, match=r"box\.json is damaged"):
        await _restore(image, tmp_path)


async def test_an_image_of_another_machine_is_refused(
    microvm_available: None, image: Path, tmp_path: Path
) -> None:
    _box_file(image)  # a shape no sandbox here has
    with pytest.raises(ConfigError, match="another shape"):
        await _restore(image, tmp_path)


async def test_forged_share_paths_are_refused(
    microvm_available: None, image: Path, tmp_path: Path
) -> None:
    sandbox = MicrovmSandbox(memory_bytes=256 << 20)
    guest = await asyncio.to_thread(guest_image, default_microvm_dir())
    shape = template_key(sandbox.qemu_argv(guest, Path("/")), qemu_binary())  # this machine's
    forged = {"version": 1, "msize": 65536, "key": "00" * 16, "devices": [],
              "fids": [{"fid": 1, "path": ["..", "etc"], "flags": 0}]}  # fmt: skip
    _box_file(image, shape=shape, shares={"usr": forged, "world": forged})
    with pytest.raises(ConfigError, match="shares are damaged"):
        await _restore(image, tmp_path)
