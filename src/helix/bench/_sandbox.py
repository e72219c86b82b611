"""``helix bench sandbox``: what isolation costs per command, and what the proxy adds.

* ``sandbox_start_overhead_p50``: start-to-exit time of ``true`` run through each
  available tier's ``Sandbox.run``, against a plain ``asyncio`` subprocess ``true``
  (the baseline) in the same run; ``params.added_ms`` is the difference (the goal
  for ``bwrap`` is at most 15 ms). A tier whose start costs hundreds of milliseconds
  (``podman``: a container per command) is measured ``STARTS_DIVISOR`` times fewer
  (at least ``MIN_STARTS``); ``params.runs`` says how many. A tier that boots a
  guest per command (``microvm``: seconds under emulation) is measured only
  ``FIXED_STARTS`` times, and says how its guests run (``params.accel``).
* ``live_exec_overhead_p50``: ``exec(["true"])`` into an open box (``Sandbox.open_box``)
  of each available tier that can keep a world live, against the same baseline,
  interleaved; as many runs as that tier's starts.
* ``proxy_added_latency_p50``: one HTTP GET of a small body from a local server
  through the filtering proxy (policy check included), against the same GET made
  directly.
* ``proxy_throughput``: a large body through the proxy, against directly.
* ``checkpoint_s``, ``restore_s``, ``checkpoint_bytes``: for each tier whose box can
  checkpoint (gVisor, microVM: with its ``params.accel``), the p50 over a few rounds
  of freezing a small box (a background ``sleep`` in it) into an image and opening a
  box again from it, and the image's size.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from helix.sandbox import (
    EgressHook,
    EgressPolicy,
    EgressProxy,
    MicrovmSandbox,
    Sandbox,
    policy_hook,
    resolve_sandbox,
    tier_statuses,
)

from ._figure import Figure, percentile

SUITE = "sandbox"
GOAL_ADDED_MS = {"bwrap": 15.0}
STARTS_DIVISOR = {"podman": 10}
"""Tiers measured fewer times, and by how much (a podman start is ~150-300 ms)."""
MIN_STARTS = 5
MAX_STARTS = {"gvisor": 40}
"""Tiers slow to start (a fresh sandbox each, hundreds of ms) measure fewer starts."""
FIXED_STARTS = {"microvm": 3}
"""Tiers measured a fixed, small number of times (a microVM boots per command)."""


@dataclass(frozen=True, slots=True)
class SandboxSizes:
    """How much work each measurement does."""

    starts: int = 200
    requests: int = 500
    throughput_bytes: int = 256 << 20
    checkpoints: int = 5

    @classmethod
    def quick(cls) -> SandboxSizes:
        """A smoke test's sizes."""
        return cls(starts=5, requests=20, throughput_bytes=4 << 20, checkpoints=2)


async def run_sandbox(sizes: SandboxSizes) -> AsyncIterator[Figure]:
    """Measure each available tier, then the proxy."""
    with tempfile.TemporaryDirectory(prefix="helix-bench-sandbox-") as folder:
        world = Path(folder)
        for status in tier_statuses():
            if not status.available:
                continue
            sandbox = resolve_sandbox(status.tier)
            await _run_true(sandbox, world)  # first use: probes and caches are warm
            starts = _starts(status.tier, sizes.starts)
            once = partial(_run_true, sandbox, world)
            plain, value, samples = await _interleaved(starts, world, once)
            params: dict[str, object] = {
                "tier": status.tier,
                "added_ms": round(value - plain, 3),
                "runs": starts,
                "p99_ms": round(percentile(samples, 99), 3),
            }
            if status.tier in GOAL_ADDED_MS:
                params["goal_added_ms"] = GOAL_ADDED_MS[status.tier]
            params |= _tier_params(sandbox)
            yield Figure(SUITE, "sandbox_start_overhead_p50", value, "ms", params, plain)
            if status.tier == "bwrap":  # a run that lists hosts also starts the bridge
                with_proxy = partial(_run_true, sandbox, world, _ALLOW_LOCAL)
                proxied = await _samples(max(sizes.starts // 10, 3), with_proxy)
                params = {"tier": "bwrap", "proxy": True, "runs": len(proxied)}
                value = percentile(proxied, 50)
                yield Figure(SUITE, "sandbox_start_overhead_p50", value, "ms", params, plain)
            if sandbox.can_keep_live:
                yield await _live_exec(sandbox, world, starts)
                async for figure in _checkpoint_figures(sandbox, world, sizes.checkpoints):
                    yield figure
    async for figure in _proxy_figures(sizes):
        yield figure


def _tier_params(sandbox: Sandbox) -> dict[str, object]:
    """What a tier's figures say of how it ran: the microvm tier's acceleration."""
    if not isinstance(sandbox, MicrovmSandbox):
        return {}
    how, why = sandbox.accel()
    return {"accel": how, "accel_reason": why}


def _starts(tier: str, starts: int) -> int:
    """How many times ``tier`` is measured: ``starts``, or fewer for a slow tier."""
    if tier in FIXED_STARTS:
        return min(starts, FIXED_STARTS[tier])
    starts = min(starts, MAX_STARTS.get(tier, starts))
    if tier not in STARTS_DIVISOR:
        return starts
    return min(starts, max(starts // STARTS_DIVISOR[tier], MIN_STARTS))


async def _interleaved(
    count: int, world: Path, once: Callable[[], Awaitable[None]]
) -> tuple[float, float, list[float]]:
    """The baseline's p50, ``once``'s p50 and samples, measured in turns."""
    baseline: list[float] = []
    samples: list[float] = []
    for _ in range(count):  # interleaved, so load drifts hit both alike
        baseline += await _samples(1, partial(_plain_true, world))
        samples += await _samples(1, once)
    return percentile(baseline, 50), percentile(samples, 50), samples


async def _live_exec(sandbox: Sandbox, world: Path, runs: int) -> Figure:
    """``live_exec_overhead_p50``: ``true`` exec'd into an open box of ``sandbox``."""
    box = await sandbox.open_box(cwd=world)
    try:

        async def exec_true() -> None:
            result = await box.exec(["true"], timeout_s=30)
            if result.exit_code != 0:
                raise RuntimeError(f"true failed in a {box.tier} box: {result.output}")

        await exec_true()  # the first exec warms what it needs
        plain, value, samples = await _interleaved(runs, world, exec_true)
    finally:
        await box.close()
    params: dict[str, object] = {
        "tier": sandbox.tier,
        "added_ms": round(value - plain, 3),
        "runs": runs,
        "p99_ms": round(percentile(samples, 99), 3),
    }
    params |= _tier_params(sandbox)
    return Figure(SUITE, "live_exec_overhead_p50", value, "ms", params, plain)


async def _checkpoint_figures(sandbox: Sandbox, world: Path, rounds: int) -> AsyncIterator[Figure]:
    """Checkpoint and restore a small box ``rounds`` times, if the tier's box can."""
    box = await sandbox.open_box(cwd=world)
    if not box.can_checkpoint:
        await box.close()
        return
    frozen: list[float] = []
    restored: list[float] = []
    sizes: list[float] = []
    with tempfile.TemporaryDirectory(prefix="helix-bench-images-") as images:
        try:
            sleeper = ["/bin/sh", "-c", "sleep 100000 </dev/null >/dev/null 2>&1 &"]
            await box.exec(sleeper, timeout_s=30)
            for index in range(rounds):
                image = await box.checkpoint(Path(images) / str(index))
                frozen.append(image.seconds)
                sizes.append(image.size_bytes)
                started = time.perf_counter()
                box = await sandbox.open_box(cwd=world, restore=image.path)
                restored.append(time.perf_counter() - started)
        finally:
            await box.close()
    params: dict[str, object] = {"tier": sandbox.tier, "rounds": rounds}
    params |= _tier_params(sandbox)
    yield Figure(SUITE, "checkpoint_s", percentile(frozen, 50), "s", params)
    yield Figure(SUITE, "restore_s", percentile(restored, 50), "s", params)
    yield Figure(SUITE, "checkpoint_bytes", percentile(sizes, 50), "bytes", params)


async def _samples(count: int, once: Callable[[], Awaitable[None]]) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await once()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def _plain_true(world: Path) -> None:
    process = await asyncio.create_subprocess_exec("true", cwd=world)
    await process.wait()


_ALLOW_LOCAL = policy_hook(EgressPolicy(allow=("127.0.0.1",)))


async def _run_true(sandbox: Sandbox, world: Path, egress: EgressHook | None = None) -> None:
    result = await sandbox.run("true", cwd=world, timeout_s=30, egress=egress)
    if result.exit_code != 0:
        raise RuntimeError(f"true failed under {sandbox.tier}: {result.output}")


async def _proxy_figures(sizes: SandboxSizes) -> AsyncIterator[Figure]:
    small = b"x" * 512
    big_chunk = b"y" * (1 << 20)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        size = sizes.throughput_bytes if b"/big" in request.split(b"\r\n", 1)[0] else len(small)
        writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode())
        if size == len(small):
            writer.write(small)
        else:
            for _ in range(size // len(big_chunk)):
                writer.write(big_chunk)
                await writer.drain()
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)))
    proxy = EgressProxy()
    try:
        async with proxy.tcp_channel(hook) as proxy_port:
            direct: list[float] = []
            proxied: list[float] = []
            url = f"http://127.0.0.1:{port}/s"
            for _ in range(sizes.requests):
                direct += await _samples(1, partial(_get, port, "/s", port))
                proxied += await _samples(1, partial(_get, proxy_port, url, port))
            base, value = percentile(direct, 50), percentile(proxied, 50)
            params = {
                "requests": sizes.requests,
                "body_bytes": len(small),
                "added_ms": round(value - base, 3),
            }
            yield Figure(SUITE, "proxy_added_latency_p50", value, "ms", params, base)
            megabytes = sizes.throughput_bytes / 1e6
            started = time.perf_counter()
            await _get(port, "/big", port)
            direct_rate = megabytes / (time.perf_counter() - started)
            started = time.perf_counter()
            await _get(proxy_port, f"http://127.0.0.1:{port}/big", port)
            proxied_rate = megabytes / (time.perf_counter() - started)
            params = {"bytes": sizes.throughput_bytes}
            yield Figure(SUITE, "proxy_throughput", proxied_rate, "MB/s", params, direct_rate)
    finally:
        server.close()
        await server.wait_closed()


async def _get(connect_port: int, target: str, server_port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", connect_port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{server_port}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    remaining = length
    while remaining:
        chunk = await reader.read(min(remaining, 1 << 20))
        if not chunk:
            raise RuntimeError("the body was cut short")
        remaining -= len(chunk)
    writer.close()
