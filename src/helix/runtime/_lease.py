"""Holding a run's lease while driving it: taken, renewed on the run's clock, released.

The lease (``helix.kernel.log.Lease``) lives in the event store, so exactly one driver
per run holds it, on any machine that shares the store. Its holder renews it every
third of its time to live; one that stops (a hung or partitioned process) loses the run
once it expires, and its appends, made with the lease, are refused by the store
(``LeaseLostError``) from the moment another driver takes it: the epoch fences them off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Literal

from helix._util import holder_gone, new_holder
from helix.errors import ConfigError, LeaseHeldError, LeaseLostError, StoreUnavailableError
from helix.kernel.events import LeaseTakenOver
from helix.kernel.log import EventStore, Lease

from ._clock import Clock
from ._supervisor import ChildSpec, open_supervisor

_log = logging.getLogger(__name__)

DEFAULT_LEASE_TTL_S = 10.0
"""How long a driver's lease lasts unrenewed: the bound on how long a run whose driver
stopped answering waits before another driver may take it."""
LEASE_TTL_ENV = "HELIX_LEASE_TTL_S"


def lease_ttl(env: dict[str, str], given: float | None) -> float:
    """The lease time to live: ``given``, else ``HELIX_LEASE_TTL_S``, else 10 s."""
    if given is None:
        text = env.get(LEASE_TTL_ENV, "").strip()
        try:
            given = float(text) if text else DEFAULT_LEASE_TTL_S
        except ValueError:
            raise ConfigError(f"{LEASE_TTL_ENV}={text!r} is not a number of seconds") from None
    if not 0 < given < 86_400:
        raise ConfigError(f"a lease lasts between 0 and 86400 seconds, not {given}")
    return given


HolderGone = Callable[[str], bool]
"""Whether a lease holder (``HOST/PID/NONCE``) is known to have ended."""


async def take_lease(
    store: EventStore,
    run_id: str,
    *,
    ttl_s: float,
    clock: Clock,
    gone: HolderGone = holder_gone,
) -> tuple[Lease, LeaseTakenOver | None]:
    """Take the run's lease for a new holder; ``LeaseHeldError`` if a live driver has it.

    A lease whose holder is known to have ended (``gone``: by default a process of this
    host that has ended) is taken over at once, without waiting for it to expire.
    Returns the lease and, when it was taken from a holder that had not released it,
    the ``lease.taken_over`` to log.
    """
    holder = new_holder()
    previous = await store.get_lease(run_id)
    reason: Literal["expired", "holder_gone"] = "expired"
    try:
        lease = await store.take_lease(run_id, holder, ttl_s=ttl_s, now=clock.now())
    except LeaseHeldError:
        previous = await store.get_lease(run_id)
        if previous is None:  # released meanwhile
            lease = await store.take_lease(run_id, holder, ttl_s=ttl_s, now=clock.now())
        elif gone(previous.holder):
            lease = await store.take_over_lease(previous, holder, ttl_s=ttl_s, now=clock.now())
            reason = "holder_gone"
        else:
            raise
    if previous is None or previous.epoch != lease.epoch - 1:
        return lease, None  # a free run, or one released after we looked
    taken = LeaseTakenOver(
        holder=holder,
        epoch=lease.epoch,
        previous_holder=previous.holder,
        previous_epoch=previous.epoch,
        reason=reason,
    )
    return lease, taken


async def driving(store: EventStore, run_id: str, now: float) -> bool:
    """Whether a live driver holds the run's lease at ``now``."""
    lease = await store.get_lease(run_id)
    return lease is not None and lease.held(now)


class _Keeper:
    """Renews one lease until stopped; on losing it, cancels the task that drives."""

    def __init__(
        self,
        store: EventStore,
        lease: Lease,
        ttl_s: float,
        clock: Clock,
        driver: asyncio.Task[object],
    ) -> None:
        self.store = store
        self.lease = lease
        self.ttl_s = ttl_s
        self.clock = clock
        self.driver = driver
        self.lost: LeaseLostError | None = None

    async def renew(self) -> None:
        while True:
            await self.clock.sleep(self.ttl_s / 3)
            try:
                self.lease = await self.store.renew_lease(
                    self.lease, ttl_s=self.ttl_s, now=self.clock.now()
                )
            except LeaseLostError as error:
                self.lost = error
                self.driver.cancel()
                return
            except StoreUnavailableError as error:  # try again: the lease outlives a blip
                _log.warning("cannot renew the lease of run %s: %s", self.lease.run_id, error)


@asynccontextmanager
async def holding_lease(
    store: EventStore,
    run_id: str,
    *,
    ttl_s: float,
    clock: Clock,
    gone: HolderGone = holder_gone,
) -> AsyncIterator[tuple[Lease, LeaseTakenOver | None]]:
    """Hold the run's lease for the block, renewed under a supervisor; released after.

    Yields the lease and, if it was taken over from a holder that had not released it,
    the ``lease.taken_over`` for the new driver to log.

    ``LeaseHeldError`` (a ``RunStateError``) if another live driver holds it. If the
    lease is lost meanwhile (another driver took it after a renewal failed), the block
    is cancelled and ``LeaseLostError`` raised in its place.
    """
    lease, taken = await _take_shielded(store, run_id, ttl_s, clock, gone)
    driver = asyncio.current_task()
    assert driver is not None
    keeper = _Keeper(store, lease, ttl_s, clock, driver)
    failure: BaseException | None = None
    try:
        async with AsyncExitStack() as stack:
            # The block runs beside the supervisor, not inside its task group, so its
            # own errors come out as they are, not wrapped in an exception group.
            supervisor = await stack.enter_async_context(open_supervisor(clock=clock))
            renewer = ChildSpec(id=f"lease:{run_id}", start=keeper.renew, restart="temporary")
            supervisor.start_child(renewer)
            try:
                yield lease, taken
            except BaseException as error:
                failure = error
            finally:
                supervisor.cancel_child(renewer.id)
    except asyncio.CancelledError:  # the renewer lost the lease as the block ended
        if keeper.lost is None:
            raise
        failure = asyncio.CancelledError()
    if keeper.lost is not None:
        if isinstance(failure, asyncio.CancelledError):
            driver.uncancel()
        raise keeper.lost from None
    await asyncio.shield(_release(store, keeper.lease))  # even when the block was cancelled
    if failure is not None:
        raise failure


async def _take_shielded(
    store: EventStore, run_id: str, ttl_s: float, clock: Clock, gone: HolderGone
) -> tuple[Lease, LeaseTakenOver | None]:
    """``take_lease``, giving back a lease taken as the caller was cancelled.

    A cancel that lands after the store committed the take would otherwise leave the
    run held by nobody driving it until the lease expires.
    """
    taking = asyncio.ensure_future(take_lease(store, run_id, ttl_s=ttl_s, clock=clock, gone=gone))
    try:
        return await asyncio.shield(taking)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # refused or failed: nothing to give back
            lease, _ = await taking
            await _release(store, lease)
        raise


async def _release(store: EventStore, lease: Lease) -> None:
    """Give the lease up; if the store is gone, it expires on its own."""
    try:
        await store.release_lease(lease)
    except StoreUnavailableError as error:
        _log.warning("cannot release the lease of run %s: %s", lease.run_id, error)
