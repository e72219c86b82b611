"""The driver's lease in SQLite: statements run in the store's open write transaction.

The lease is three columns of the run's registry row (``lease_holder``, ``lease_epoch``,
``lease_expires``); the append's own ``UPDATE`` checks the epoch (``_sqlite.py``).
"""

from __future__ import annotations

import sqlite3

from helix.errors import LeaseHeldError, RunNotFoundError

from ._records import Lease

_TAKE = """
UPDATE runs SET lease_holder = ?, lease_epoch = lease_epoch + 1, lease_expires = ?
WHERE id = ? AND (lease_holder IS NULL OR lease_expires <= ? OR lease_epoch = ?)
RETURNING lease_epoch
"""
_RENEW = "UPDATE runs SET lease_holder = ?, lease_expires = ? WHERE id = ? AND lease_epoch = ?"
_RELEASE = "UPDATE runs SET lease_holder = NULL, lease_expires = 0 WHERE id = ? AND lease_epoch = ?"
_LEASE = "SELECT lease_holder, lease_epoch, lease_expires FROM runs WHERE id = ?"


def take(
    db: sqlite3.Connection,
    run_id: str,
    holder: str,
    now: float,
    expires_at: float,
    stale: Lease | None,
) -> Lease:
    """Take the lease if free, expired at ``now``, or still ``stale``; else refuse."""
    stale_epoch = -1 if stale is None else stale.epoch
    taken = db.execute(_TAKE, (holder, expires_at, run_id, now, stale_epoch)).fetchone()
    if taken is not None:
        return Lease(run_id, holder, int(taken[0]), expires_at)
    found = db.execute(_LEASE, (run_id,)).fetchone()
    if found is None:
        raise RunNotFoundError(run_id)
    raise LeaseHeldError(run_id, found[0], float(found[2]))


def renew(db: sqlite3.Connection, lease: Lease, expires_at: float) -> int:
    """Move the expiry if the lease is still the run's; return the run's epoch."""
    db.execute(_RENEW, (lease.holder, expires_at, lease.run_id, lease.epoch))
    found = db.execute(_LEASE, (lease.run_id,)).fetchone()
    if found is None:
        raise RunNotFoundError(lease.run_id)
    return int(found[1])


def release(db: sqlite3.Connection, lease: Lease) -> None:
    """Clear the holder if the lease is still the run's (the epoch stays)."""
    db.execute(_RELEASE, (lease.run_id, lease.epoch))


def get(db: sqlite3.Connection, run_id: str) -> Lease | None:
    """The run's lease, ``None`` if nobody holds it."""
    found = db.execute(_LEASE, (run_id,)).fetchone()
    if found is None:
        raise RunNotFoundError(run_id)
    holder, epoch, expires_at = found
    return None if holder is None else Lease(run_id, holder, int(epoch), float(expires_at))
