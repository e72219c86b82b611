"""Helix's 9P2000.L server, driven over a Unix socket pair by a small client."""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

import pytest

from helix.sandbox._ninep import NinepShare

from ._ninep_client import Rlerror, connected

O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_DIRECTORY = 0, 1, 2, 0o100, 0o1000, 0o200000


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c.txt").write_text("hello 9p\n")
    (root / "top.txt").write_text("top\n")
    return root


@pytest.fixture
def share(world: Path):
    served = NinepShare(world)
    yield served
    served.close()


async def test_version_caps_msize_and_names_unknown_versions(share: NinepShare) -> None:
    async with connected(share, handshake=False) as client:
        assert await client.version(8 << 20) == [512 * 1024, "9P2000.L"]
        assert await client.version(65536, "9P2000.u") == [65536, "unknown"]
        assert await client.version(65536) == [65536, "9P2000.L"]
        qid = await client.attach(1)
        assert qid[0] == 0x80
        with pytest.raises(Rlerror) as refused:
            await client.attach(1)
        assert refused.value.errno == errno.EINVAL
        assert not share.busy


async def test_walk_and_getattr(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        qids = await client.walk(0, 1, "a", "b", "c.txt")
        assert [q[0] for q in qids] == [0x80, 0x80, 0x00]
        st = os.lstat(world / "a" / "b" / "c.txt")
        assert qids[-1][2] == st.st_ino
        attr = await client.getattr(1)
        assert attr["valid"] == 0x7FF
        assert attr["qid"] == qids[-1]
        assert attr["mode"] == st.st_mode
        assert attr["size"] == 9
        assert attr["nlink"] == 1
        assert (attr["mtime_sec"], attr["mtime_nsec"]) == divmod(st.st_mtime_ns, 10**9)
        # A walk whose first name fails is an error; a later one, the qids walked.
        with pytest.raises(Rlerror) as missing:
            await client.walk(0, 2, "nope", "b")
        assert missing.value.errno == errno.ENOENT
        assert len(await client.walk(0, 2, "a", "nope", "c")) == 1
        with pytest.raises(Rlerror) as unknown:
            await client.getattr(2)  # a partial walk makes no fid
        assert unknown.value.errno == errno.EBADF
        assert await client.walk(1, 3) == []  # a clone
        assert (await client.getattr(3))["qid"] == qids[-1]


async def test_create_write_read_back(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        await client.walk(0, 1, "a")
        qid, iounit = await client.lcreate(1, "new.bin", O_RDWR | O_CREAT, 0o4755)
        assert qid[0] == 0
        assert iounit == 0
        assert await client.write(1, 0, b"abc" * 1000) == 3000
        assert await client.write(1, 3000, b"END") == 3
        assert await client.read(1, 2998, 100) == b"bcEND"
        assert await client.read(1, 10_000, 100) == b""
        await client.call("fsync", "dd", 1, 0)
        await client.clunk(1)
        created = world / "a" / "new.bin"
        assert created.read_bytes() == b"abc" * 1000 + b"END"
        assert stat.S_IMODE(created.stat().st_mode) == 0o755  # no setuid on a host file
        await client.walk(0, 2, "a", "new.bin")
        await client.lopen(2, O_RDONLY)
        with pytest.raises(Rlerror) as denied:
            await client.write(2, 0, b"x")
        assert denied.value.errno == errno.EBADF


async def test_readdir_in_several_calls(share: NinepShare, world: Path) -> None:
    many = world / "many"
    many.mkdir()
    names = {f"file-{i:04d}-{'x' * (i % 40)}" for i in range(500)}
    for name in names:
        (many / name).touch()
    (many / "sub").mkdir()
    os.symlink("file-0001", many / "link")
    async with connected(share) as client:
        await client.walk(0, 1, "many")
        await client.lopen(1, O_RDONLY | O_DIRECTORY)
        seen: list[tuple[int, int, str]] = []
        offset, calls = 0, 0
        while batch := await client.readdir(1, offset, 2000):
            calls += 1
            seen += [(kind, off, name) for _qid, off, kind, name in batch]
            offset = batch[-1][1]
        assert calls > 5
        got = [name for _k, _o, name in seen]
        assert sorted(got) == sorted([*names, "sub", "link", ".", ".."])
        kinds = {name: kind for kind, _o, name in seen}
        assert kinds["sub"] == 4
        assert kinds["link"] == 10
        assert kinds["file-0001-x"] == 8
        # An offset from the middle goes on from there, the same entries again.
        middle = seen[len(seen) // 2]
        again = await client.readdir(1, middle[1], 2000)
        assert again[0][3] == seen[len(seen) // 2 + 1][2]
        with pytest.raises(Rlerror) as small:
            await client.readdir(1, 0, 10)
        assert small.value.errno == errno.EINVAL


async def test_mkdir_rename_renameat_unlinkat(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        (qid,) = await client.call("mkdir", "dsdd", 0, "d1", 0o755, 0, reply="Q")
        assert qid[0] == 0x80
        assert (world / "d1").is_dir()
        await client.walk(0, 1, "a", "b", "c.txt")
        await client.walk(0, 2, "d1")
        await client.walk(0, 3, "a")
        await client.call("rename", "dds", 3, 2, "moved")  # a → d1/moved
        assert (world / "d1" / "moved" / "b" / "c.txt").exists()
        attr = await client.getattr(1)  # the fid under the renamed folder follows it
        assert attr["size"] == 9
        await client.call("renameat", "dsds", 0, "top.txt", 2, "top2.txt")
        assert (world / "d1" / "top2.txt").read_text() == "top\n"
        await client.call("unlinkat", "dsd", 2, "top2.txt", 0)
        assert not (world / "d1" / "top2.txt").exists()
        with pytest.raises(Rlerror) as notdir:
            await client.call("unlinkat", "dsd", 2, "moved", 0)
        assert notdir.value.errno == errno.EISDIR
        (world / "d1" / "moved" / "b" / "c.txt").unlink()
        await client.walk(0, 4, "d1", "moved")
        await client.call("unlinkat", "dsd", 4, "b", 0x200)
        assert not (world / "d1" / "moved" / "b").exists()
        await client.call("remove", "d", 4)
        assert not (world / "d1" / "moved").exists()
        with pytest.raises(Rlerror):
            await client.getattr(4)  # removed fids are clunked


async def test_symlink_readlink_link_mknod(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        (qid,) = await client.call("symlink", "dssd", 0, "ln", "a/b/c.txt", 0, reply="Q")
        assert qid[0] == 0x02
        assert os.readlink(world / "ln") == "a/b/c.txt"
        await client.walk(0, 1, "ln")
        assert await client.call("readlink", "d", 1, reply="s") == ["a/b/c.txt"]
        await client.walk(0, 2, "top.txt")
        await client.call("link", "dds", 0, 2, "hard.txt")
        assert os.stat(world / "hard.txt").st_ino == os.stat(world / "top.txt").st_ino
        await client.call("mknod", "dsdddd", 0, "fifo", stat.S_IFIFO | 0o644, 0, 0, 0, reply="Q")
        assert stat.S_ISFIFO(os.lstat(world / "fifo").st_mode)
        await client.call("mknod", "dsdddd", 0, "plain", stat.S_IFREG | 0o600, 0, 0, 0, reply="Q")
        assert (world / "plain").is_file()
        with pytest.raises(Rlerror) as device:
            await client.call("mknod", "dsdddd", 0, "null", stat.S_IFCHR | 0o666, 1, 3, 0)
        assert device.value.errno == errno.EPERM
        await client.walk(0, 3, "fifo")
        with pytest.raises(Rlerror) as fifo:  # never opened by the host: nothing blocks
            await client.lopen(3, O_RDONLY)
        assert fifo.value.errno == errno.EOPNOTSUPP


async def test_setattr_truncate_chmod_times(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        await client.walk(0, 1, "top.txt")
        await client.setattr(1, 0x008, size=2)
        assert (world / "top.txt").read_bytes() == b"to"
        await client.setattr(1, 0x001, mode=0o6600)
        assert stat.S_IMODE(os.stat(world / "top.txt").st_mode) == 0o600
        await client.setattr(1, 0x010 | 0x020 | 0x080 | 0x100, atime=(1000, 5), mtime=(2000, 7))
        st = os.stat(world / "top.txt")
        assert (st.st_atime_ns, st.st_mtime_ns) == (1000 * 10**9 + 5, 2000 * 10**9 + 7)
        await client.setattr(1, 0x020)  # mtime now, atime kept
        st = os.stat(world / "top.txt")
        assert st.st_atime_ns == 1000 * 10**9 + 5
        assert abs(st.st_mtime - time.time()) < 60
        await client.setattr(1, 0x002 | 0x004, uid=os.getuid(), gid=os.getgid())
        await client.lopen(1, O_RDWR)
        await client.setattr(1, 0x008, size=0)
        assert (world / "top.txt").read_bytes() == b""


async def test_statfs_lock_xattr(share: NinepShare, world: Path) -> None:
    async with connected(share) as client:
        fields = await client.call("statfs", "d", 0, reply="ddqqqqqqd")
        vfs = os.statvfs(world)
        assert fields[0] == 0x01021997
        assert fields[1:3] == [vfs.f_frsize, vfs.f_blocks]
        assert fields[8] == vfs.f_namemax
        await client.walk(0, 1, "top.txt")
        await client.lopen(1, O_RDWR)
        assert await client.call("lock", "dbdqqds", 1, 1, 0, 0, 0, 42, "guest", reply="b") == [0]
        got = await client.call("getlock", "dbqqds", 1, 1, 5, 10, 42, "guest", reply="bqqds")
        assert got == [2, 5, 10, 42, "guest"]
        with pytest.raises(Rlerror) as xattr:
            await client.call("xattrwalk", "dds", 1, 2, "user.x")
        assert xattr.value.errno == errno.ENODATA
        with pytest.raises(Rlerror) as create:
            await client.call("xattrcreate", "dsqd", 1, "user.x", 1, 0)
        assert create.value.errno == errno.EOPNOTSUPP
        await client.call("flush", "w", 3)


async def test_a_mebibyte_in_quarter_mebibyte_reads(share: NinepShare, world: Path) -> None:
    payload = os.urandom(1 << 20)
    (world / "big.bin").write_bytes(payload)
    async with connected(share) as client:
        await client.walk(0, 1, "big.bin")
        await client.lopen(1, O_RDONLY)
        started = time.perf_counter()
        chunks = [await client.read(1, off, 256 * 1024) for off in range(0, 1 << 20, 1 << 18)]
        elapsed = time.perf_counter() - started
        assert b"".join(chunks) == payload
        assert await client.read(1, 1 << 20, 256 * 1024) == b""
        print(f"1 MiB in 256 KiB Treads: {elapsed * 1000:.1f} ms")
        assert elapsed < 5


async def test_many_small_requests_are_quick(share: NinepShare) -> None:
    async with connected(share) as client:
        started = time.perf_counter()
        for i in range(500):
            await client.walk(0, 10, "a", "b", "c.txt")
            await client.getattr(10)
            await client.clunk(10)
            del i
        per = (time.perf_counter() - started) / 1500
        print(f"walk/getattr/clunk: {per * 1e6:.0f} µs a request")
        assert per < 0.01
