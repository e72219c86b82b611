"""``lease_takeover_s``: a killed driver is replaced at once, a frozen one as its lease expires."""

from __future__ import annotations

from pathlib import Path

from helix.bench._lease import LeaseSizes, run_lease


async def test_lease_takeover_figures(tmp_path: Path) -> None:
    sizes = LeaseSizes(samples=1, ttl_s=2.0)
    figures = {f.params["driver"]: f async for f in run_lease(sizes, workdir=tmp_path)}
    assert set(figures) == {"killed", "frozen"}
    for figure in figures.values():
        assert (figure.suite, figure.name, figure.unit) == ("distributed", "lease_takeover_s", "s")
        assert figure.params["lease_ttl_s"] == 2.0
        assert figure.value > 0
    # A frozen driver renewed at most a third of the TTL before it froze: no one may
    # take its run before the rest of the TTL has passed (the lease, not a timing).
    assert figures["frozen"].value >= 2.0 * 2 / 3
    # A killed one is a dead process of this host: taken over without waiting for expiry.
    assert figures["killed"].value < figures["frozen"].value
