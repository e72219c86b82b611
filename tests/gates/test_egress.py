"""The egress gate and the host patterns of ``EgressPolicy``."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.gates import EgressGate, EgressPolicy

from ._support import make_call, make_ctx

POLICY = EgressPolicy(
    allow=("*.example.com", "pypi.org", "api.GitHub.com."),
    deny=("evil.example.com", "*.tracker.test"),
)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("pypi.org", "allow"),
        ("PyPI.org", "allow"),
        ("pypi.org.", "allow"),
        ("api.github.com", "allow"),
        ("docs.example.com", "allow"),
        ("a.b.example.com", "allow"),
        ("example.com", "unlisted"),  # the wildcard covers subdomains only
        ("badexample.com", "unlisted"),
        ("example.com.evil.test", "unlisted"),
        ("files.pypi.org", "unlisted"),
        ("evil.example.com", "deny"),  # deny wins over the allowing wildcard
        ("x.tracker.test", "deny"),
        ("tracker.test", "unlisted"),
    ],
)
def test_host_patterns(host: str, expected: str) -> None:
    assert POLICY.decide(host) == expected


def test_star_matches_every_host() -> None:
    assert EgressPolicy(allow=("*",)).decide("anything.test") == "allow"
    assert EgressPolicy(allow=("*",), deny=("bad.test",)).decide("bad.test") == "deny"


@pytest.mark.parametrize(
    ("url", "verdict"),
    [
        ("https://docs.example.com/guide?q=1#top", "allow"),
        ("http://pypi.org:8080/simple/", "allow"),
        ("https://evil.example.com/", "deny"),
        ("https://user:pw@evil.example.com/", "deny"),
        ("https://docs.example.com@evil.example.com/", "deny"),  # the host is after the @
        ("https://example.com/", "ask"),
        ("https://unknown.test/", "ask"),
        ("HTTPS://PYPI.ORG/", "allow"),
        ("https://\uff50\uff59\uff50\uff49.org/", "allow"),  # full-width "pypi", same host
        ("https://x.tracker.test./", "deny"),
    ],
)
async def test_egress_decisions_when_attended(world: Path, url: str, verdict: str) -> None:
    decision = await EgressGate()(make_call("http_fetch", url=url), make_ctx(world, egress=POLICY))
    assert decision.verdict == verdict, decision.reason


async def test_unlisted_hosts_are_refused_when_nobody_attends(world: Path) -> None:
    ctx = make_ctx(world, egress=POLICY, attended=False)
    decision = await EgressGate()(make_call("http_fetch", url="https://unknown.test/"), ctx)
    assert decision.verdict == "deny"
    assert decision.reason == "unknown.test is not in the egress allowlist (unattended)"
    listed = await EgressGate()(make_call("http_fetch", url="https://pypi.org/"), ctx)
    assert listed.verdict == "allow"


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://pypi.org/x",
        "gopher://pypi.org/",
        "javascript:alert(1)",
        "pypi.org/simple",  # no scheme
        "https:///path-only",
        "http://evil.test\\@pypi.org/",  # parsers disagree on which host this is
        "http://pypi.org /x",
        "http://pypi.org\r\nHost: evil.test/",
        "http://[::1/",
        3,
    ],
)
async def test_malformed_or_non_http_urls_are_refused(world: Path, url: object) -> None:
    ctx = make_ctx(world, egress=EgressPolicy(allow=("*",)))
    decision = await EgressGate()(make_call("http_fetch", url=url), ctx)
    assert decision.verdict == "deny"


async def test_other_tools_pass(world: Path) -> None:
    decision = await EgressGate()(make_call("read_file", path="a"), make_ctx(world))
    assert decision.verdict == "allow"
