"""Resource caps seen through the tools: the sandbox's /tmp (real bwrap) and the world's quota."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.sandbox import DEFAULT_TMP_BYTES, BwrapSandbox, ProcessSandbox
from helix.tools import BUILTIN_TOOLS, ToolContext, ToolResult, WorldQuota

TOOLS = {definition.name: definition for definition in BUILTIN_TOOLS}
MIB = 1 << 20


@pytest.fixture
def bwrap(bwrap_available: None) -> Iterator[BwrapSandbox]:
    sandbox = BwrapSandbox(max_processes=64)
    yield sandbox
    sandbox.close()


async def call(ctx: ToolContext, name: str, **args: object) -> ToolResult:
    return await TOOLS[name].call(ctx, args)


async def test_a_command_filling_tmp_past_its_cap_is_stopped_and_told(
    bwrap: BwrapSandbox, tmp_path: Path
) -> None:
    ctx = ToolContext(run_id="r", call_id="c", world=tmp_path, sandbox=bwrap, tmp_bytes=8 * MIB)
    result = await call(ctx, "run_command", command="head -c 20000000 /dev/zero > /tmp/fill")
    assert not result.ok
    assert "No space left on device" in result.output
    assert (
        "[the sandbox's /tmp cap was hit: /tmp holds at most 8 MiB (sandbox.tmp_mb);"
        " writes past it fail with 'No space left on device']"
    ) in result.output
    assert not (tmp_path / "fill").exists()
    # Under the cap: nothing said.
    fine = await call(ctx, "run_command", command="head -c 4000000 /dev/zero > /tmp/fill")
    assert fine.ok
    assert "/tmp cap" not in fine.output


async def test_tmp_is_sized_by_the_call_or_the_default(bwrap: BwrapSandbox, tmp_path: Path) -> None:
    size = "stat -f -c '%b %S' /tmp"
    default = await bwrap.run(size, cwd=tmp_path, timeout_s=30)
    blocks, block = default.output.split()
    assert int(blocks) * int(block) == DEFAULT_TMP_BYTES == 512 * MIB
    asked = await bwrap.run(size, cwd=tmp_path, timeout_s=30, tmp_bytes=16 * MIB)
    blocks, block = asked.output.split()
    assert int(blocks) * int(block) == 16 * MIB
    assert not asked.tmp_full


@pytest.fixture
def quota_ctx(tmp_path: Path) -> Iterator[tuple[ToolContext, WorldQuota]]:
    world = tmp_path / "world"
    world.mkdir()
    quota = WorldQuota(world.resolve(), 1 * MIB)
    sandbox = ProcessSandbox()
    yield ToolContext("r", "c", world.resolve(), sandbox, world_quota=quota), quota
    sandbox.close()


async def test_file_writes_that_would_pass_the_world_quota_are_refused(
    quota_ctx: tuple[ToolContext, WorldQuota],
) -> None:
    ctx, quota = quota_ctx
    assert (await call(ctx, "write_file", path="a.txt", content="head\n" + "a" * 600_000)).ok
    refused = await call(ctx, "write_file", path="b.txt", content="b" * 600_000)
    assert not refused.ok
    assert refused.output.startswith(
        "refused: writing 600000 bytes to b.txt would take the world to 1.1 MiB on disk"
    )
    assert "past its quota of 1.0 MiB (sandbox.world_mb)" in refused.output
    assert not (ctx.world / "b.txt").exists()
    # edit_file is held to the same cap; writes that do not grow the world pass.
    grown = await call(ctx, "edit_file", path="a.txt", old="head", new="a" * 600_000)
    assert not grown.ok
    assert "sandbox.world_mb" in grown.output
    assert (await call(ctx, "write_file", path="a.txt", content="short")).ok
    assert (await call(ctx, "write_file", path="b.txt", content="b" * 600_000)).ok
    assert quota.used is not None
    assert quota.used <= quota.limit_bytes


async def test_a_world_already_over_its_quota_only_lets_writes_shrink_it(
    quota_ctx: tuple[ToolContext, WorldQuota],
) -> None:
    ctx, quota = quota_ctx
    (ctx.world / "big.bin").write_bytes(b"\1" * (2 * MIB))  # as a command would
    over = quota.over(fresh=True)
    assert over is not None
    assert over.startswith("the world is over its quota: it takes 2.0 MiB on disk")
    assert "big.bin (2.0 MiB)" in over
    assert not (await call(ctx, "write_file", path="x.txt", content="x")).ok
    assert (await call(ctx, "write_file", path="big.bin", content="")).ok
    assert quota.over() is None
    assert (await call(ctx, "write_file", path="x.txt", content="x")).ok


def test_the_measure_counts_hard_links_once_and_follows_no_symlink(tmp_path: Path) -> None:
    world = tmp_path / "world"
    (world / "sub").mkdir(parents=True)
    (world / "sub" / "data").write_bytes(b"\1" * MIB)
    (world / "link").hardlink_to(world / "sub" / "data")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "huge").write_bytes(b"\1" * (4 * MIB))
    (world / "out").symlink_to(outside)
    used = WorldQuota(world, 8 * MIB).measure()
    assert MIB <= used < 2 * MIB
