"""``helix bench sandbox``: what isolation costs per command, and what the proxy adds.

* ``sandbox_start_overhead_p50``: start-to-exit time of ``true`` run through each
  available tier's ``Sandbox.run``, against a plain ``asyncio`` subprocess ``true``
  (the baseline) in the same run; ``params.added_ms`` is the difference (the goal
  for ``bwrap`` is at most 15 ms).
* ``proxy_added_latency_p50``: one HTTP GET of a small body from a local server
  through the filtering proxy (policy check included), against the same GET made
  directly.
* ``proxy_throughput``: a large body through the proxy, against directly.
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
    Sandbox,
    policy_hook,
    resolve_sandbox,
    tier_statuses,
)

from ._figure import Figure, percentile

SUITE = "sandbox"
GOAL_ADDED_MS = {"bwrap": 15.0}


@dataclass(frozen=True, slots=True)
class SandboxSizes:
    """How much work each measurement does."""

    starts: int = 200
    requests: int = 500
    throughput_bytes: int = 256 << 20

    @classmethod
    def quick(cls) -> SandboxSizes:
        """A smoke test's sizes."""
        return cls(starts=5, requests=20, throughput_bytes=4 << 20)


async def run_sandbox(sizes: SandboxSizes) -> AsyncIterator[Figure]:
    """Measure each available tier, then the proxy."""
    with tempfile.TemporaryDirectory(prefix="helix-bench-sandbox-") as folder:
        world = Path(folder)
        for status in tier_statuses():
            if not status.available:
                continue
            sandbox = resolve_sandbox(status.tier)
            await _run_true(sandbox, world)  # first use: probes and caches are warm
            baseline: list[float] = []
            samples: list[float] = []
            for _ in range(sizes.starts):  # interleaved, so load drifts hit both alike
                baseline += await _samples(1, partial(_plain_true, world))
                samples += await _samples(1, partial(_run_true, sandbox, world))
            plain, value = percentile(baseline, 50), percentile(samples, 50)
            params: dict[str, object] = {
                "tier": status.tier,
                "added_ms": round(value - plain, 3),
                "runs": sizes.starts,
                "p99_ms": round(percentile(samples, 99), 3),
            }
            if status.tier in GOAL_ADDED_MS:
                params["goal_added_ms"] = GOAL_ADDED_MS[status.tier]
            yield Figure(SUITE, "sandbox_start_overhead_p50", value, "ms", params, plain)
            if status.tier == "bwrap":  # a run that lists hosts also starts the bridge
                with_proxy = partial(_run_true, sandbox, world, _ALLOW_LOCAL)
                proxied = await _samples(max(sizes.starts // 10, 3), with_proxy)
                params = {"tier": "bwrap", "proxy": True, "runs": len(proxied)}
                value = percentile(proxied, 50)
                yield Figure(SUITE, "sandbox_start_overhead_p50", value, "ms", params, plain)
    async for figure in _proxy_figures(sizes):
        yield figure


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
