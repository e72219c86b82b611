"""A 9p share's state across a checkpoint: dump, JSON on disk, load in a new share."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from helix.sandbox._ninep import NinepShare

from ._ninep_client import Rlerror, connected

O_RDONLY, O_RDWR, O_DIRECTORY = 0, 2, 0o200000


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    (root / "dir" / "deep").mkdir(parents=True)
    (root / "dir" / "deep" / "data.bin").write_bytes(bytes(range(256)) * 64)
    (root / "dir" / "notes.txt").write_text("notes\n")
    for i in range(200):
        (root / "dir" / f"entry-{i:03d}").touch()
    return root


async def test_a_loaded_share_goes_on_where_the_dump_left_off(world: Path) -> None:
    first = NinepShare(world)
    async with connected(first) as client:
        await client.version(65536)
        await client.attach(0)
        data_qid = (await client.walk(0, 1, "dir", "deep", "data.bin"))[-1]
        await client.lopen(1, O_RDONLY)
        assert await client.read(1, 0, 1000) == (bytes(range(256)) * 4)[:1000]
        await client.walk(0, 2, "dir")
        await client.walk(2, 3)  # a clone of a walked fid
        await client.lopen(3, O_RDONLY | O_DIRECTORY)
        page = await client.readdir(3, 0, 1500)
        offset = page[-1][1]
        state = json.loads(json.dumps(first.dump()))
        # The guest is frozen here; only the dump crosses over to the new process.
    first.close()
    assert state["msize"] == 65536
    assert {f["fid"]: f["path"] for f in state["fids"]} == {
        0: [],
        1: ["dir", "deep", "data.bin"],
        2: ["dir"],
        3: ["dir"],
    }
    second = NinepShare.load(world, state)
    try:
        async with connected(second, handshake=False) as client:
            assert await client.read(1, 1000, 24) == (bytes(range(256)) * 4)[1000:1024]
            assert (await client.getattr(1))["qid"] == data_qid
            assert (await client.walk(2, 4, "notes.txt"))[0][0] == 0
            await client.lopen(4, O_RDWR)
            assert await client.read(4, 0, 100) == b"notes\n"
            rest = []
            while batch := await client.readdir(3, offset, 1500):
                rest += batch
                offset = batch[-1][1]
            names = {e[3] for e in page} | {e[3] for e in rest}
            assert len(page) + len(rest) == 200 + 4  # entries, deep, notes.txt, '.', '..'
            assert names == {f"entry-{i:03d}" for i in range(200)} | {
                "deep",
                "notes.txt",
                ".",
                "..",
            }
            with pytest.raises(Rlerror) as unknown:
                await client.getattr(9)
            assert unknown.value.errno == errno.EBADF
        saved = {f["fid"]: f for f in second.dump()["fids"]}
        assert saved[4]["path"] == ["dir", "notes.txt"]
        assert saved[4]["flags"] & 3 == O_RDWR
    finally:
        second.close()


async def test_a_fid_whose_file_is_gone_is_stale(world: Path) -> None:
    first = NinepShare(world)
    async with connected(first) as client:
        await client.walk(0, 1, "dir", "notes.txt")
        await client.walk(0, 2, "dir", "notes.txt")
        await client.lopen(2, O_RDONLY)
        state = first.dump()
    first.close()
    (world / "dir" / "notes.txt").unlink()
    second = NinepShare.load(world, state)
    try:
        async with connected(second, handshake=False) as client:
            for fid in (1, 2):
                with pytest.raises(Rlerror) as stale:
                    await client.getattr(fid)
                assert stale.value.errno == errno.ESTALE
            with pytest.raises(Rlerror) as stale_read:
                await client.read(2, 0, 10)
            assert stale_read.value.errno == errno.ESTALE
            await client.clunk(1)
            with pytest.raises(Rlerror):
                await client.call("remove", "d", 2)  # stale, and clunked all the same
            with pytest.raises(Rlerror) as gone:
                await client.clunk(2)
            assert gone.value.errno == errno.EBADF
            assert (await client.getattr(0))["qid"][0] == 0x80
    finally:
        second.close()


async def test_a_read_only_share_does_not_reopen_for_writing(world: Path) -> None:
    first = NinepShare(world)
    async with connected(first) as client:
        await client.walk(0, 1, "dir", "notes.txt")
        await client.lopen(1, O_RDWR)
        state = first.dump()
    first.close()
    second = NinepShare.load(world, state, read_only=True)
    try:
        async with connected(second, handshake=False) as client:
            with pytest.raises(Rlerror) as stale:
                await client.read(1, 0, 10)
            assert stale.value.errno == errno.ESTALE
    finally:
        second.close()


def _state(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "version": 1,
        "msize": 65536,
        "key": "00" * 16,
        "devices": [],
        "fids": [{"fid": 0, "path": [], "flags": None}],
    }
    base.update(changes)
    return base


def _fid(path: Any, flags: Any = None, fid: Any = 1) -> dict[str, Any]:
    return {"fid": fid, "path": path, "flags": flags}


@pytest.mark.parametrize(
    "state",
    [
        _state(fids=[_fid([".."])]),
        _state(fids=[_fid(["dir", "..", "x"])]),
        _state(fids=[_fid(["dir/deep"])]),
        _state(fids=[_fid(["/etc"])]),
        _state(fids=[_fid(["a\0b"])]),
        _state(fids=[_fid(["."])]),
        _state(fids=[_fid([""])]),
        _state(fids=[_fid("dir")]),
        _state(fids=[_fid([1])]),
        _state(fids=[_fid(["x" * 256])]),
        _state(fids=[_fid([], fid=True)]),
        _state(fids=[_fid([], fid=0xFFFFFFFF)]),
        _state(fids=[_fid([], fid=0), _fid(["dir"], fid=0)]),
        _state(fids=[_fid(["dir"], flags=0o1000)]),  # O_TRUNC again on a restore
        _state(fids=[_fid(["dir"], flags=0o100)]),  # O_CREAT
        _state(fids=[_fid(["dir"], flags=0o10000000)]),  # O_PATH
        _state(fids=[_fid(["dir"], flags="0")]),
        _state(fids={}),
        _state(msize=1 << 30),
        _state(msize=100),
        _state(key="zz" * 16),
        _state(key="00"),
        _state(devices=[-1]),
        _state(version=2),
        _state(devices="x"),
    ],
)
def test_load_refuses_a_state_it_cannot_trust(world: Path, state: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        NinepShare.load(world, state)


def test_a_dump_is_json_and_loads_back(world: Path) -> None:
    share = NinepShare(world)
    state = share.dump()
    share.close()
    assert json.loads(json.dumps(state)) == state
    again = NinepShare.load(world, state)
    assert again.dump() == state
    again.close()
