"""The filtering egress proxy, against real local servers over real sockets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helix.sandbox import (
    EgressDecision,
    EgressPolicy,
    EgressProxy,
    ProcessSandbox,
    normal_host,
    policy_hook,
)


@dataclass
class Upstream:
    """A local server that records what reaches it and answers ``ok``."""

    port: int = 0
    requests: list[bytes] = field(default_factory=list[bytes])


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    seen = Upstream()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.requests.append(head)
        if head.startswith(b"ECHO"):  # a raw tunnel check: echo one line back
            writer.write(head)
        else:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    seen.port = server.sockets[0].getsockname()[1]
    yield seen
    server.close()
    await server.wait_closed()


async def exchange(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return answer


@pytest.fixture
def decisions() -> list[EgressDecision]:
    return []


@pytest.fixture
async def proxy_port(decisions: list[EgressDecision]) -> AsyncIterator[int]:
    async def record(decision: EgressDecision) -> None:
        decisions.append(decision)

    policy = EgressPolicy(allow=("127.0.0.1", "*.allowed.test"), deny=("bad.allowed.test",))
    async with EgressProxy().tcp_channel(policy_hook(policy, record)) as port:
        yield port


async def test_an_allowed_http_request_is_forwarded_closed_and_recorded(
    upstream: Upstream, proxy_port: int, decisions: list[EgressDecision]
) -> None:
    request = (
        f"GET http://127.0.0.1:{upstream.port}/path?q=1 HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{upstream.port}\r\nProxy-Authorization: Basic c2VjcmV0\r\n"
        "Connection: keep-alive\r\n\r\n"
    ).encode()
    answer = await exchange(proxy_port, request)
    assert answer.endswith(b"\r\n\r\nok")
    (forwarded,) = upstream.requests
    assert forwarded.startswith(b"GET /path?q=1 HTTP/1.1\r\n")
    assert b"Proxy-Authorization" not in forwarded
    assert b"keep-alive" not in forwarded
    assert forwarded.endswith(b"Connection: close\r\n\r\n")
    assert [(d.host, d.port, d.verdict) for d in decisions] == [
        ("127.0.0.1", upstream.port, "allow")
    ]


async def test_connect_tunnels_to_an_allowed_host(upstream: Upstream, proxy_port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    await writer.drain()
    assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 200 Connection established\r\n\r\n"
    writer.write(b"ECHO through\r\n\r\n")
    await writer.drain()
    assert await asyncio.wait_for(reader.read(), 10) == b"ECHO through\r\n\r\n"
    writer.close()


@pytest.mark.parametrize(
    ("request_head", "host"),
    [
        (b"GET http://elsewhere.test/ HTTP/1.1\r\n\r\n", "elsewhere.test"),
        (b"CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n", "elsewhere.test"),
        (b"CONNECT bad.allowed.test:443 HTTP/1.1\r\n\r\n", "bad.allowed.test"),  # deny wins
        (b"CONNECT ALLOWED.test:443 HTTP/1.1\r\n\r\n", "allowed.test"),  # not a subdomain
        (b"CONNECT 127.0.0.2:5432 HTTP/1.1\r\n\r\n", "127.0.0.2"),
    ],
)
async def test_unlisted_and_denied_hosts_are_refused_and_recorded(
    proxy_port: int, decisions: list[EgressDecision], request_head: bytes, host: str
) -> None:
    answer = await exchange(proxy_port, request_head)
    assert answer.startswith(b"HTTP/1.1 403 Forbidden")
    assert [(d.host, d.verdict) for d in decisions] == [(host, "deny")]


async def test_a_listed_subdomain_is_allowed_even_if_it_does_not_resolve(
    proxy_port: int, decisions: list[EgressDecision]
) -> None:
    answer = await exchange(proxy_port, b"CONNECT api.allowed.test:443 HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 502 Bad Gateway")
    assert [(d.host, d.verdict) for d in decisions] == [("api.allowed.test", "allow")]


@pytest.mark.parametrize(
    "request_head",
    [
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"GET https://127.0.0.1/ HTTP/1.1\r\n\r\n",
        b"CONNECT user:pw@127.0.0.1:443 HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
        b"CONNECT 127.0.0.1:port HTTP/1.1\r\n\r\n",
        b"NONSENSE\r\n\r\n",
        b"GET http://a b/ HTTP/1.1\r\n\r\n",
    ],
)
async def test_malformed_requests_are_refused_before_any_decision(
    proxy_port: int, decisions: list[EgressDecision], request_head: bytes
) -> None:
    answer = await exchange(proxy_port, request_head)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request")
    assert decisions == []


async def test_an_oversized_head_is_refused(proxy_port: int) -> None:
    answer = await exchange(proxy_port, b"GET http://x/ HTTP/1.1\r\nX: " + b"a" * 70000)
    assert answer.startswith(b"HTTP/1.1 400") or answer == b""


async def test_closing_the_channel_ends_its_open_tunnels(upstream: Upstream) -> None:
    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)))
    async with EgressProxy().tcp_channel(hook) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
    assert await asyncio.wait_for(reader.read(), 5) == b""  # the command ended: so did this
    writer.close()


async def test_unix_channels_serve_the_same_way(upstream: Upstream) -> None:
    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)))
    async with EgressProxy().unix_channel(hook) as path:
        reader, writer = await asyncio.open_unix_connection(str(path))
        writer.write(f"GET http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n\r\n".encode())
        await writer.drain()
        assert (await asyncio.wait_for(reader.read(), 10)).endswith(b"ok")
        writer.close()
    assert not path.exists()


FULL_WIDTH_EXAMPLE = "\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("Example.COM.", "example.com"),
        (FULL_WIDTH_EXAMPLE, "example.com"),  # the same name to the client
        ("bücher.example", "xn--bcher-kva.example"),
        ("[::1]", "::1"),
        ("bad host", None),
        ("", None),
        ("a\x00b", None),
    ],
)
def test_hosts_are_normalised_as_clients_connect(given: str, expected: str | None) -> None:
    assert normal_host(given) == expected


async def test_policy_hook_refuses_invalid_names() -> None:
    decision = await policy_hook(EgressPolicy(allow=("*",)))("bad host", 80)
    assert decision.verdict == "deny"
    assert "valid host" in decision.reason


async def test_process_tier_commands_get_the_proxy_in_their_environment(
    upstream: Upstream, tmp_path: Path
) -> None:
    seen: list[EgressDecision] = []

    async def record(decision: EgressDecision) -> None:
        seen.append(decision)

    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)), record)
    box = ProcessSandbox()
    fetch = (
        f"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{upstream.port}/').read())"
    )
    result = await box.run(f'python3 -c "{fetch}"', cwd=tmp_path, timeout_s=20, egress=hook)
    box.close()
    assert result.output == "b'ok'\n"
    assert [(d.host, d.verdict) for d in seen] == [("127.0.0.1", "allow")]
