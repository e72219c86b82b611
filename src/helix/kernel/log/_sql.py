"""Column lists and row mapping shared by the SQL backends."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from helix.errors import StoreDamagedError
from helix.kernel.events import ForkPoint, RunStatus

from ._records import EncodedEvent, RunRecord

PREFIX_END = "\U0010ffff"
"""Sorts after every character an id may hold, in byte order (both SQL stores compare
ids so): ``prefix <= id < prefix + PREFIX_END`` is "starts with" as one index range."""

RUN_COLUMNS = (
    "id, workspace, status, objective, model, blueprint, world, parent_id, fork_seq,"
    " created_at, updated_at, next_seq, turns, input_tokens, output_tokens, cost_usd"
)
EVENT_COLUMNS = "run_id, seq, type, v, ts, turn, actor, data, ext"


def run_values(record: RunRecord) -> tuple[Any, ...]:
    """Return the registry row's values, in ``RUN_COLUMNS`` order."""
    parent = record.parent
    return (
        record.id,
        record.workspace,
        record.status,
        record.objective,
        record.model,
        record.blueprint,
        record.world,
        None if parent is None else parent.run_id,
        None if parent is None else parent.seq,
        record.created_at,
        record.updated_at,
        record.next_seq,
        record.turns,
        record.input_tokens,
        record.output_tokens,
        record.cost_usd,
    )


def run_from_row(row: Sequence[Any]) -> RunRecord:
    """Build a ``RunRecord`` from a row selected with ``RUN_COLUMNS``.

    ``StoreDamagedError`` when the row does not hold a run (a damaged store).
    """
    try:
        parent = None if row[7] is None else ForkPoint(run_id=row[7], seq=row[8])
        return RunRecord(
            id=row[0],
            workspace=row[1],
            status=cast(RunStatus, row[2]),
            objective=row[3],
            model=row[4],
            blueprint=row[5],
            world=row[6],
            parent=parent,
            created_at=row[9],
            updated_at=row[10],
            next_seq=int(row[11]),
            turns=int(row[12]),
            input_tokens=int(row[13]),
            output_tokens=int(row[14]),
            cost_usd=float(row[15]),
        )
    except (ValueError, TypeError, IndexError) as error:
        detail = str(error).splitlines()[0]
        raise StoreDamagedError(
            f"the store is damaged: the row of run {str(row[0])[:80]!r} cannot be read ({detail})"
        ) from None


def select_runs(
    status: str | None,
    workspaces: frozenset[str] | None,
    parent_id: str | None,
    after: tuple[str, str] | None,
    limit: int,
    placeholder: Any,
    prefix: str | None = None,
) -> tuple[str, list[Any]]:
    """The whole query of a run listing: newest first, or in id order for a prefix."""
    where, args = run_filters(status, workspaces, parent_id, after, placeholder, prefix)
    order = "id" if prefix is not None else "created_at DESC, id DESC"
    args.append(limit)
    limited = f"LIMIT {placeholder(len(args))}"
    return f"SELECT {RUN_COLUMNS} FROM runs {where} ORDER BY {order} {limited}", args


def run_filters(
    status: str | None,
    workspaces: frozenset[str] | None,
    parent_id: str | None,
    after: tuple[str, str] | None,
    placeholder: Any,
    prefix: str | None = None,
) -> tuple[str, list[Any]]:
    """Build the WHERE clause of a run listing; ``placeholder(n)`` spells parameter n.

    ``prefix``: only ids that start with it.
    """
    clauses: list[str] = []
    args: list[Any] = []

    def param(value: Any) -> str:
        args.append(value)
        return cast(str, placeholder(len(args)))

    if status is not None:
        clauses.append(f"status = {param(status)}")
    if workspaces is not None:
        marks = ", ".join(param(w) for w in sorted(workspaces))
        clauses.append(f"workspace IN ({marks})")
    if parent_id is not None:
        clauses.append(f"parent_id = {param(parent_id)}")
    if after is not None:
        clauses.append(f"(created_at, id) < ({param(after[0])}, {param(after[1])})")
    if prefix is not None:  # "starts with" as a range: one scan of the id index
        clauses.append(f"id >= {param(prefix)} AND id < {param(prefix + PREFIX_END)}")
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return where, args


def column_arrays(rows: list[EncodedEvent]) -> list[tuple[Any, ...]]:
    """Transpose rows into the column arrays the PostgreSQL store's ``unnest`` takes."""
    return list(zip(*rows, strict=True))


def blob_columns(blobs: dict[str, bytes]) -> tuple[list[str], list[int], list[bytes]]:
    # Sorted, so two appends storing the same new blobs lock their keys in the same
    # order and cannot deadlock.
    hashes = sorted(blobs)
    return hashes, [len(blobs[h]) for h in hashes], [blobs[h] for h in hashes]
