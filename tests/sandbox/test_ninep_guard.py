"""The 9p server as a boundary: symlinks never followed, names checked, hostile bytes."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
import struct
from pathlib import Path

import pytest

from helix.sandbox._ninep import NinepShare

from ._ninep_client import Rlerror, T, connected, encode

O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_DIRECTORY = 0, 1, 2, 0o100, 0o200000


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    (root / "a").mkdir(parents=True)
    (root / "a" / "file").write_text("inside\n")
    os.symlink("/etc", root / "etc")
    os.symlink("/", root / "slash")
    os.symlink("../..", root / "a" / "up")
    return root


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def share(world: Path):
    served = NinepShare(world)
    yield served
    served.close()


async def test_a_symlink_out_of_the_world_is_never_followed(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        (qid,) = await client.walk(0, 1, "etc")
        assert qid[0] == 0x02  # the link's own qid
        attr = await client.getattr(1)
        assert stat.S_ISLNK(attr["mode"])
        assert attr["size"] == len("/etc")
        with pytest.raises(Rlerror) as loop:
            await client.lopen(1, O_RDONLY)
        assert loop.value.errno == errno.ELOOP
        with pytest.raises(Rlerror) as loop_dir:
            await client.lopen(1, O_RDONLY | O_DIRECTORY)
        assert loop_dir.value.errno == errno.ELOOP
        # Walking through the link stops at the link: passwd is never reached.
        assert len(await client.walk(0, 2, "etc", "passwd")) == 1
        with pytest.raises(Rlerror):
            await client.getattr(2)
        with pytest.raises(Rlerror) as through:
            await client.walk(1, 3, "passwd")
        assert through.value.errno == errno.ENOTDIR
        for request, fmt, args in [
            ("mkdir", "dsdd", (1, "x", 0o755, 0)),
            ("lcreate", "dsddd", (1, "x", O_CREAT | O_RDWR, 0o644, 0)),
            ("symlink", "dssd", (1, "x", "y", 0)),
            ("unlinkat", "dsd", (1, "passwd", 0)),
            ("renameat", "dsds", (1, "passwd", 0, "stolen")),
        ]:
            with pytest.raises(Rlerror) as refused:
                await client.call(request, fmt, *args)
            assert refused.value.errno in (errno.ENOTDIR, errno.ELOOP), request
        assert await client.call("readlink", "d", 1, reply="s") == ["/etc"]
        await client.walk(0, 4, "slash")
        await client.setattr(4, 0x010 | 0x020 | 0x080 | 0x100, atime=(5, 0), mtime=(5, 0))
        assert os.stat("/").st_mtime != 5  # the link's own times, not /'s
        with pytest.raises(Rlerror) as chmod:
            await client.setattr(4, 0x001, mode=0o777)
        assert chmod.value.errno == errno.EOPNOTSUPP
        with pytest.raises(Rlerror) as truncate:
            await client.setattr(1, 0x008, size=0)
        assert truncate.value.errno == errno.ELOOP
        await client.walk(0, 5, "a")
        await client.call("link", "dds", 5, 1, "hard")  # a hard link to the link itself
        assert (world / "a" / "hard").is_symlink()


async def test_dotdot_at_the_root_stays_in(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        root = await client.attach(9)
        qids = await client.walk(0, 1, "..", "..", "a", "..", "..")
        a = (0x80, 0, os.stat(world / "a").st_ino)
        assert qids == [root, root, a, root, root]
        inode = os.stat(world / "a" / "file").st_ino
        assert (await client.walk(0, 2, "..", "a", "file"))[-1][2] == inode
        assert (await client.walk(0, 3, "a", "up"))[1][0] == 0x02
        with pytest.raises(Rlerror) as file_up:
            await client.walk(2, 4, "..")
        assert file_up.value.errno == errno.ENOTDIR


@pytest.mark.parametrize("name", ["a/file", "../x", "x\0y", ".", "", "x/"])
async def test_names_must_be_one_component(share: NinepShare, world: Path, name: str) -> None:
    async with connected(share) as client:
        with pytest.raises(Rlerror) as walk:
            await client.walk(0, 1, name)
        assert walk.value.errno in (errno.EINVAL, errno.EPROTO)
        for request, fmt, args in [
            ("lcreate", "dsddd", (0, name, O_CREAT | O_RDWR, 0o644, 0)),
            ("mkdir", "dsdd", (0, name, 0o755, 0)),
            ("symlink", "dssd", (0, name, "t", 0)),
            ("unlinkat", "dsd", (0, name, 0)),
            ("renameat", "dsds", (0, "a", 0, name)),
        ]:
            with pytest.raises(Rlerror) as refused:
                await client.call(request, fmt, *args)
            assert refused.value.errno in (errno.EINVAL, errno.EPROTO), request
    assert not any(name.startswith("x") for name in _tree(world))


async def test_dotdot_is_refused_outside_walk(share: NinepShare) -> None:
    async with connected(share) as client:
        await client.walk(0, 1, "a")
        with pytest.raises(Rlerror) as up:
            await client.call("mkdir", "dsdd", 1, "..", 0o755, 0)
        assert up.value.errno == errno.EINVAL
        with pytest.raises(Rlerror) as rename:
            await client.call("rename", "dds", 1, 0, "..")
        assert rename.value.errno == errno.EINVAL


async def test_a_read_only_share_changes_nothing(world: Path) -> None:
    share = NinepShare(world, read_only=True)
    before = _tree(world)
    try:
        async with connected(share) as client:
            await client.walk(0, 1, "a", "file")
            await client.walk(0, 2, "a")
            assert await client.lopen(1, O_RDONLY)
            assert await client.read(1, 0, 100) == b"inside\n"
            await client.walk(0, 3, "a", "file")
            calls = [
                ("lopen", "dd", (3, O_WRONLY)),
                ("lopen", "dd", (3, O_RDONLY | 0o1000)),
                ("lcreate", "dsddd", (2, "n", O_CREAT | O_RDWR, 0o644, 0)),
                ("mkdir", "dsdd", (2, "n", 0o755, 0)),
                ("symlink", "dssd", (2, "n", "t", 0)),
                ("mknod", "dsdddd", (2, "n", stat.S_IFREG | 0o644, 0, 0, 0)),
                ("setattr", "dddddqqqqq", (3, 0x008, 0, 0, 0, 0, 0, 0, 0, 0)),
                ("setattr", "dddddqqqqq", (3, 0x001, 0o777, 0, 0, 0, 0, 0, 0, 0)),
                ("write", "B", (encode("dqd", 1, 0, 1) + b"x",)),
                ("link", "dds", (2, 3, "n")),
                ("rename", "dds", (3, 2, "n")),
                ("renameat", "dsds", (2, "file", 2, "n")),
                ("unlinkat", "dsd", (2, "file", 0)),
            ]
            for request, fmt, args in calls:
                with pytest.raises(Rlerror) as refused:
                    await client.call(request, fmt, *args)
                assert refused.value.errno == errno.EROFS, request
            with pytest.raises(Rlerror) as remove:
                await client.call("remove", "d", 3)
            assert remove.value.errno == errno.EROFS
    finally:
        share.close()
    assert _tree(world) == before
    assert (world / "a" / "file").read_text() == "inside\n"


async def test_malformed_messages_leave_the_server_answering(share: NinepShare) -> None:
    async with connected(share) as client:
        # A body cut short, a string longer than its message, bytes left over.
        for kind, body in [
            (T["walk"], encode("ddw", 0, 1, 3) + encode("s", "a")),
            (T["walk"], encode("ddw", 0, 1, 1) + b"\xff\x00ab"),
            (T["getattr"], encode("d", 0)),
            (T["clunk"], encode("dd", 0, 0)),
            (T["walk"], encode("ddw", 0, 1, 17) + encode("s", "a") * 17),
        ]:
            rkind, rbody = await client.rpc(kind, body)
            assert rkind == 7
            assert struct.unpack("<I", rbody)[0] in (errno.EPROTO, errno.EINVAL)
        rkind, rbody = await client.rpc(250, b"whatever")  # an unknown type
        assert (rkind, struct.unpack("<I", rbody)[0]) == (7, errno.EOPNOTSUPP)
        rkind, rbody = await client.rpc(T["auth"], encode("dss", 5, "u", ""))
        assert rkind == 7
        rkind, rbody = await client.rpc(T["clunk"], encode("d", 77))  # an unknown fid
        assert (rkind, struct.unpack("<I", rbody)[0]) == (7, errno.EBADF)
        rkind, rbody = await client.rpc(T["read"] + 1, encode("d", 0))  # an R type sent
        assert rkind == 7
        rkind, _ = await client.rpc(T["write"], encode("dqd", 0, 0, 10) + b"short")
        assert rkind == 7
        assert (await client.walk(0, 1, "a"))[0][0] == 0x80  # still answering


@pytest.mark.parametrize(
    "garbage",
    [
        b"\x03\x00\x00\x00",  # size < 7
        struct.pack("<IBH", 1 << 30, 110, 1),  # far beyond msize
        struct.pack("<IBH", 512 * 1024 + 1, 118, 1),
        b"\x00" * 64,
    ],
)
async def test_a_broken_frame_closes_cleanly(share: NinepShare, garbage: bytes) -> None:
    async with connected(share) as client:
        await client.send_raw(garbage)
        assert await asyncio.wait_for(client.reader.read(), 5) == b""
    async with connected(share) as again:  # the share serves the next connection
        assert (await again.walk(0, 1, "a"))[0][0] == 0x80


async def test_eof_mid_message_ends_serving(share: NinepShare) -> None:
    async with connected(share) as client:
        await client.send_raw(struct.pack("<IBH", 100, 110, 1) + b"\x00" * 10)
        await asyncio.sleep(0.05)
        assert share.busy  # a request partly read
        client.writer.write_eof()
        assert await asyncio.wait_for(client.reader.read(), 5) == b""
    assert not share.busy
