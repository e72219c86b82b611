"""The driver's lease, as every event store keeps it: one live driver per run.

A lease names its holder, its expiry and its epoch; each take raises the epoch, and
an append made with a lease is refused unless its epoch is still the run's, in the
same transaction as the write (``EventStore.append(…, lease=)``). The backends keep it
beside the run registry: the SQL stores in the run's own row, so the append's one
conditional ``UPDATE`` checks both the next seq and the epoch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from helix.errors import InvalidEventError, LeaseLostError

from ._records import Lease


class LeaseStore(ABC):
    """The lease half of ``EventStore``: public methods over four backend primitives."""

    async def take_lease(self, run_id: str, holder: str, *, ttl_s: float, now: float) -> Lease:
        """Make ``holder`` the run's one driver until ``now + ttl_s``, with a new epoch.

        Taken if nobody holds the lease or it expired by ``now`` (a driver that stopped
        renewing loses the run); the epoch is one higher than the last, which fences off
        the appends of every earlier holder. Concurrent takers: one wins. Raises
        ``LeaseHeldError`` if another holder's lease is live, ``RunNotFoundError`` if
        there is no such run. ``now`` is the caller's clock (POSIX seconds).
        """
        _check_lease_args(holder, ttl_s)
        return await self._take_lease(run_id, holder, now, now + ttl_s, None)

    async def take_over_lease(
        self, stale: Lease, holder: str, *, ttl_s: float, now: float
    ) -> Lease:
        """Take the run's lease from ``stale``'s holder though it has not expired.

        For a holder known to be dead (a process of this host that is gone): taken only
        if ``stale`` is still the run's lease, exactly; else ``LeaseHeldError`` (someone
        else got there first), as ``take_lease``.
        """
        _check_lease_args(holder, ttl_s)
        return await self._take_lease(stale.run_id, holder, now, now + ttl_s, stale)

    async def renew_lease(self, lease: Lease, *, ttl_s: float, now: float) -> Lease:
        """Extend the lease to ``now + ttl_s``; ``LeaseLostError`` if it was taken over.

        A lease that expired but that nobody took is still the run's, and renews.
        """
        _check_lease_args(lease.holder, ttl_s)
        expires_at = now + ttl_s
        current = await self._renew_lease(lease, expires_at)
        if current != lease.epoch:
            raise LeaseLostError(lease.run_id, lease.epoch, current)
        return Lease(lease.run_id, lease.holder, lease.epoch, expires_at)

    async def release_lease(self, lease: Lease) -> None:
        """Give the run up: the next taker need not wait. Nothing if it was taken over."""
        await self._release_lease(lease)

    async def get_lease(self, run_id: str) -> Lease | None:
        """Return the run's lease (live or expired), or ``None`` if nobody holds it.

        ``RunNotFoundError`` if there is no such run.
        """
        return await self._get_lease(run_id)

    # -- backend primitives -----------------------------------------------------------

    @abstractmethod
    async def _take_lease(
        self, run_id: str, holder: str, now: float, expires_at: float, stale: Lease | None
    ) -> Lease:
        """Atomically take the lease if free or expired at ``now`` (or still ``stale``).

        The new epoch is the last one plus one; ``LeaseHeldError`` or ``RunNotFoundError``.
        """

    @abstractmethod
    async def _renew_lease(self, lease: Lease, expires_at: float) -> int:
        """Move the expiry if ``lease``'s epoch is the run's; return the run's epoch."""

    @abstractmethod
    async def _release_lease(self, lease: Lease) -> None:
        """Clear the holder if ``lease``'s epoch is the run's (the epoch stays)."""

    @abstractmethod
    async def _get_lease(self, run_id: str) -> Lease | None:
        """Return the run's lease, ``None`` if nobody holds it; ``RunNotFoundError``."""


def _check_lease_args(holder: str, ttl_s: float) -> None:
    if not holder or len(holder) > 256:
        raise InvalidEventError("a lease holder is 1-256 characters")
    if not ttl_s > 0:
        raise InvalidEventError(f"a lease lasts a positive time, not {ttl_s} s")
