"""Conformance: the driver's lease, and the fencing epoch every driver's append is checked by.

Times are given, not read (``now``): a store compares expiries with the caller's clock,
so these tests move time by passing a later ``now`` and never sleep.
"""

from __future__ import annotations

import asyncio

import pytest

from helix.errors import InvalidEventError, LeaseHeldError, LeaseLostError, RunNotFoundError
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import EventStore
from helix.testing._sessions import run_created

_T0 = 1_000_000.0
_TTL = 10.0


def _steer(text: str) -> NewEvent:
    return NewEvent(SteerReceived(message=text), actor="user:ann")


def _driver(text: str) -> NewEvent:
    return NewEvent(SteerReceived(message=text), actor="agent")


class LeaseConformance:
    """``take_lease``, ``renew_lease``, ``release_lease`` and appends made with a lease."""

    async def _leased_run(self, store: EventStore) -> str:
        return (await store.create_run(run_created())).id

    async def test_take_renew_and_read_the_lease(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        assert await store.get_lease(run_id) is None
        lease = await store.take_lease(run_id, "host/1/a", ttl_s=_TTL, now=_T0)
        assert (lease.run_id, lease.holder, lease.epoch) == (run_id, "host/1/a", 1)
        assert lease.expires_at == _T0 + _TTL
        assert await store.get_lease(run_id) == lease
        renewed = await store.renew_lease(lease, ttl_s=_TTL, now=_T0 + 3)
        assert (renewed.epoch, renewed.expires_at) == (1, _T0 + 3 + _TTL)
        assert await store.get_lease(run_id) == renewed
        assert renewed.live(_T0 + 12)
        assert not renewed.live(_T0 + 13)

    async def test_a_live_lease_refuses_another_taker(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        with pytest.raises(LeaseHeldError) as held:
            await store.take_lease(run_id, "b", ttl_s=_TTL, now=_T0 + _TTL - 0.5)
        assert (held.value.holder, held.value.code) == ("a", "lease_held")
        with pytest.raises(LeaseHeldError):  # not even its own holder takes it twice
            await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0 + 1)
        assert (await store.get_lease(run_id)).holder == "a"  # type: ignore[union-attr]

    async def test_an_expired_lease_is_taken_over_with_a_higher_epoch(
        self, store: EventStore
    ) -> None:
        run_id = await self._leased_run(store)
        stale = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        taken = await store.take_lease(run_id, "b", ttl_s=_TTL, now=_T0 + _TTL)
        assert (taken.holder, taken.epoch) == ("b", 2)
        with pytest.raises(LeaseLostError) as lost:
            await store.renew_lease(stale, ttl_s=_TTL, now=_T0 + _TTL + 1)
        assert (lost.value.epoch, lost.value.current, lost.value.code) == (1, 2, "lease_lost")
        assert await store.get_lease(run_id) == taken  # the failed renewal changed nothing

    async def test_a_stale_holders_append_is_refused_and_writes_nothing(
        self, store: EventStore
    ) -> None:
        run_id = await self._leased_run(store)
        stale = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        assert await store.append(run_id, [_driver("a1")], expected_seq=1, lease=stale) == 2
        fresh = await store.take_lease(run_id, "b", ttl_s=_TTL, now=_T0 + 60)
        with pytest.raises(LeaseLostError):
            await store.append(run_id, [_driver("a2"), _driver("a3")], expected_seq=2, lease=stale)
        with pytest.raises(LeaseLostError):  # the lease is checked before the seq
            await store.append_events(run_id, [_driver("a2")], expected_seq=7, lease=stale)
        record = await store.get_run(run_id)
        assert record.next_seq == 2
        assert [e.seq for e in await store.read(run_id)] == [0, 1]
        await store.append(run_id, [_driver("b1")], expected_seq=2, lease=fresh)
        assert [e.data["message"] for e in await store.read(run_id, after=0)] == ["a1", "b1"]

    async def test_peoples_appends_need_no_lease(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        lease = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        await store.append(run_id, [_steer("from a person")], expected_seq=1)
        # and the driver, whose lease is still the run's, appends after them
        await store.append(run_id, [_driver("driver")], expected_seq=2, lease=lease)
        assert (await store.get_run(run_id)).next_seq == 3

    async def test_an_expired_lease_nobody_took_still_renews(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        lease = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        renewed = await store.renew_lease(lease, ttl_s=_TTL, now=_T0 + 100)
        assert (renewed.epoch, renewed.expires_at) == (1, _T0 + 100 + _TTL)
        with pytest.raises(LeaseHeldError):
            await store.take_lease(run_id, "b", ttl_s=_TTL, now=_T0 + 101)

    async def test_release_lets_the_next_driver_in_at_once(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        first = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        await store.release_lease(first)
        assert await store.get_lease(run_id) is None
        second = await store.take_lease(run_id, "b", ttl_s=_TTL, now=_T0 + 1)  # not expired
        assert second.epoch == 2
        await store.release_lease(first)  # a stale release leaves the new holder alone
        assert await store.get_lease(run_id) == second
        with pytest.raises(LeaseLostError):
            await store.append(run_id, [_driver("late")], expected_seq=1, lease=first)

    async def test_taking_over_a_dead_holders_live_lease(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        dead = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        taken = await store.take_over_lease(dead, "b", ttl_s=_TTL, now=_T0 + 1)
        assert (taken.holder, taken.epoch) == ("b", 2)
        with pytest.raises(LeaseHeldError):  # the lease moved on: `dead` no longer names it
            await store.take_over_lease(dead, "c", ttl_s=_TTL, now=_T0 + 2)
        assert await store.get_lease(run_id) == taken

    async def test_concurrent_takers_one_wins(self, store: EventStore) -> None:
        run_id = await self._leased_run(store)
        results = await asyncio.gather(
            *(store.take_lease(run_id, f"h{i}", ttl_s=_TTL, now=_T0) for i in range(8)),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        assert len(won) == 1
        assert won[0].epoch == 1
        assert all(isinstance(r, LeaseHeldError) for r in results if r is not won[0])
        assert await store.get_lease(run_id) == won[0]

    async def test_concurrent_takers_over_an_expired_lease_one_wins(
        self, store: EventStore
    ) -> None:
        run_id = await self._leased_run(store)
        await store.take_lease(run_id, "old", ttl_s=_TTL, now=_T0)
        later = _T0 + 2 * _TTL
        results = await asyncio.gather(
            *(store.take_lease(run_id, f"h{i}", ttl_s=_TTL, now=later) for i in range(8)),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        assert len(won) == 1
        assert won[0].epoch == 2

    async def test_lease_refusals(self, store: EventStore) -> None:
        with pytest.raises(RunNotFoundError):
            await store.take_lease("run_missing", "a", ttl_s=_TTL, now=_T0)
        with pytest.raises(RunNotFoundError):
            await store.get_lease("run_missing")
        run_id = await self._leased_run(store)
        other = await self._leased_run(store)
        with pytest.raises(InvalidEventError):
            await store.take_lease(run_id, "a", ttl_s=0, now=_T0)
        with pytest.raises(InvalidEventError):
            await store.take_lease(run_id, "", ttl_s=_TTL, now=_T0)
        lease = await store.take_lease(run_id, "a", ttl_s=_TTL, now=_T0)
        with pytest.raises(InvalidEventError):  # one run's lease is no licence for another
            await store.append(other, [_driver("x")], expected_seq=1, lease=lease)
        assert (await store.get_run(other)).next_seq == 1
