"""``sdk_call_overhead``: what ``helix.Client`` adds to a raw HTTP call of the same route.

The SDK's sync client hands each call to its own event loop (a thread), sends it with
httpx and parses the answer into a typed ``Run``; the baseline is a plain
``httpx.Client`` sending the same request and parsing its JSON. Both share one warm
connection each and alternate in rounds, so load on the machine hits both alike.
"""

from __future__ import annotations

import time

from ._figure import Figure

SUITE = "server"


_ROUNDS = 10


def sdk_call_overhead(port: int, token: str, run_id: str, calls: int) -> Figure:
    """``helix.Client.get`` against raw ``httpx`` on ``GET /runs/{id}``, in interleaved rounds."""
    import httpx

    from helix.api import Client

    url = f"http://127.0.0.1:{port}"
    per_round = max(1, calls // _ROUNDS)
    sdk_s = raw_s = 0.0
    headers = {"Authorization": f"Bearer {token}"}
    with (
        Client(url, token=token) as client,
        httpx.Client(base_url=f"{url}/api/v1", headers=headers) as raw,
    ):
        client.get(run_id)  # both connections open and warm before timing
        raw.get(f"/runs/{run_id}").raise_for_status()
        for _ in range(_ROUNDS):
            started = time.perf_counter()
            for _ in range(per_round):
                client.get(run_id)
            sdk_s += time.perf_counter() - started
            started = time.perf_counter()
            for _ in range(per_round):
                answer = raw.get(f"/runs/{run_id}")
                answer.raise_for_status()
                answer.json()
            raw_s += time.perf_counter() - started
    calls = per_round * _ROUNDS
    params = {
        "calls": calls,
        "route": "GET /runs/{id}",
        "client": "helix.Client (sync), get(run_id) -> Run",
        "baseline": "httpx.Client GET of the same route, JSON parsed",
    }
    return Figure(SUITE, "sdk_call_overhead", sdk_s / calls * 1000, "ms", params,
                  baseline=raw_s / calls * 1000)  # fmt: skip
