"""The driver's lease in PostgreSQL: one statement each, on a connection or the pool.

The lease is three columns of the run's registry row; a taker waits on the row lock of
a racing taker or appender, then sees its epoch (PostgreSQL re-checks the ``WHERE`` on
the row it waited for), so one of two racing takers wins and an append racing a
take-over either commits before it or is refused. The append's own ``UPDATE`` checks
the epoch (``_postgres.py``).
"""

from __future__ import annotations

from typing import Any

from helix.errors import LeaseHeldError, RunNotFoundError

from ._records import Lease

_TAKE = """
UPDATE runs SET lease_holder = $2, lease_epoch = lease_epoch + 1, lease_expires = $3
WHERE id = $1 AND (lease_holder IS NULL OR lease_expires <= $4 OR lease_epoch = $5)
RETURNING lease_epoch
"""
_RENEW = """
UPDATE runs SET lease_holder = $2, lease_expires = $3 WHERE id = $1 AND lease_epoch = $4
RETURNING lease_epoch
"""
_RELEASE = """
UPDATE runs SET lease_holder = NULL, lease_expires = 0 WHERE id = $1 AND lease_epoch = $2
"""
_LEASE = "SELECT lease_holder, lease_epoch, lease_expires FROM runs WHERE id = $1"


async def take(
    db: Any, run_id: str, holder: str, now: float, expires_at: float, stale: Lease | None
) -> Lease:
    """Take the lease if free, expired at ``now``, or still ``stale``; else refuse."""
    stale_epoch = -1 if stale is None else stale.epoch
    epoch = await db.fetchval(_TAKE, run_id, holder, expires_at, now, stale_epoch)
    if epoch is not None:
        return Lease(run_id, holder, int(epoch), expires_at)
    found = await db.fetchrow(_LEASE, run_id)  # a fresh statement sees the winner
    if found is None:
        raise RunNotFoundError(run_id)
    raise LeaseHeldError(run_id, found[0], float(found[2]))


async def renew(db: Any, lease: Lease, expires_at: float) -> int:
    """Move the expiry if the lease is still the run's; return the run's epoch."""
    epoch = await db.fetchval(_RENEW, lease.run_id, lease.holder, expires_at, lease.epoch)
    if epoch is None:  # a fresh statement sees the take-over that beat it
        epoch = await db.fetchval("SELECT lease_epoch FROM runs WHERE id = $1", lease.run_id)
    if epoch is None:
        raise RunNotFoundError(lease.run_id)
    return int(epoch)


async def release(db: Any, lease: Lease) -> None:
    """Clear the holder if the lease is still the run's (the epoch stays)."""
    await db.execute(_RELEASE, lease.run_id, lease.epoch)


async def get(db: Any, run_id: str) -> Lease | None:
    """The run's lease, ``None`` if nobody holds it."""
    found = await db.fetchrow(_LEASE, run_id)
    if found is None:
        raise RunNotFoundError(run_id)
    holder, epoch, expires_at = found
    return None if holder is None else Lease(run_id, holder, int(epoch), float(expires_at))
