"""Spend summed across runs: grouped, and over time when asked.

One fold over the runs' own model calls: by model, provider, role, blueprint,
workspace, person or run.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from helix.kernel.log import EventStore, RunRecord

from ._state import Usage

SpendGroup = Literal["model", "provider", "blueprint", "workspace", "person", "run", "role"]
SPEND_GROUPS: tuple[SpendGroup, ...] = (
    "model",
    "provider",
    "blueprint",
    "workspace",
    "person",
    "run",
    "role",
)
SpendBucket = Literal["day", "hour"]
SPEND_BUCKETS: tuple[SpendBucket, ...] = ("day", "hour")

_BUCKET_END = {"day": 10, "hour": 13}
"""How much of a log time (``2026-12-01T04:39:03.123456Z``) names its day or hour."""
_BUCKET_PAD = {"day": "T00:00:00Z", "hour": ":00:00Z"}


@dataclass(frozen=True)
class SpendQuery:
    """Which model calls count and how they are grouped.

    Times are in the log's format (``format_iso``) and compare as text; ``since`` is
    inclusive, ``until`` exclusive; a call's time is its ``model.responded``'s.
    """

    by: SpendGroup = "model"
    bucket: SpendBucket | None = None
    workspace: str | None = None
    workspaces: Collection[str] | None = None
    """Only runs of these (a caller's workspaces); ``None``: every run."""
    since: str | None = None
    until: str | None = None
    model: str | None = None
    """A ``provider:model``."""
    provider: str | None = None
    blueprint: str | None = None
    person: str | None = None


@dataclass(frozen=True, slots=True)
class SpendSlot:
    """What one group spent in one time bucket."""

    start: str
    """The bucket's first moment (``2026-12-01T00:00:00Z``)."""
    key: str
    usage: Usage


@dataclass
class SpendReport:
    """Tokens and USD in total and per group, and per (bucket, group) over time.

    A run's person is who created it (its ``run.created`` actor: ``user:ann``, or
    ``system`` for a child or a scripted start); a fork's, who forked it.

    Each run counts its own calls only, so a fork's inherited history is not counted
    twice. ``unpriced_calls`` counts calls whose price was unknown. ``runs`` counts the
    runs the filters leave in (with a model, provider or time filter: those with a
    matching call).
    """

    runs: int = 0
    total: Usage = field(default_factory=Usage)
    by_provider: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_model: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_role: dict[str, Usage] = field(default_factory=dict[str, Usage])
    """By the role each call served (``main``, ``summary``, ``worker``…; docs/models.md)."""
    by_blueprint: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_person: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_workspace: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_run: dict[str, Usage] = field(default_factory=dict[str, Usage])
    series: list[SpendSlot] = field(default_factory=list[SpendSlot])
    """With a bucket: the chosen group's spend per bucket, oldest first (empty otherwise)."""


def _add(into: Usage, tokens: dict[str, Any], cost: float | None) -> None:
    into.input_tokens += tokens["input_tokens"]
    into.output_tokens += tokens["output_tokens"]
    if cost is None:
        into.unpriced_calls += 1
    else:
        into.cost_usd += cost


def _run_keys(record: RunRecord, person: str) -> dict[str, str]:
    return {
        "blueprint": record.blueprint or "(none)",
        "workspace": record.workspace,
        "person": person,
        "run": record.id,
    }


def _run_passes(query: SpendQuery, keys: dict[str, str]) -> bool:
    wanted = (("blueprint", query.blueprint), ("person", query.person))
    return all(value is None or keys[name] == value for name, value in wanted)


def _call_passes(query: SpendQuery, model: str, ts: str) -> bool:
    if query.model is not None and model != query.model:
        return False
    if query.provider is not None and model.partition(":")[0] != query.provider:
        return False
    if query.since is not None and ts < query.since:
        return False
    return query.until is None or ts < query.until


class _Fold:
    """The running sums, one model call at a time."""

    def __init__(self, query: SpendQuery) -> None:
        self.query = query
        self.report = SpendReport()
        self.points: dict[tuple[str, str], Usage] = {}

    def call(
        self, keys: dict[str, str], ts: str, tokens: dict[str, Any], cost: float | None
    ) -> None:
        report = self.report
        _add(report.total, tokens, cost)
        tables = {
            "model": report.by_model,
            "provider": report.by_provider,
            "role": report.by_role,
            "blueprint": report.by_blueprint,
            "workspace": report.by_workspace,
            "person": report.by_person,
            "run": report.by_run,
        }
        for name, table in tables.items():
            _add(table.setdefault(keys[name], Usage()), tokens, cost)
        bucket = self.query.bucket
        if bucket is not None:
            start = ts[: _BUCKET_END[bucket]] + _BUCKET_PAD[bucket]
            _add(self.points.setdefault((start, keys[self.query.by]), Usage()), tokens, cost)

    def done(self) -> SpendReport:
        self.report.series = [SpendSlot(s, k, u) for (s, k), u in sorted(self.points.items())]
        return self.report


async def spend(
    store: EventStore, *, workspace: str | None = None, query: SpendQuery | None = None
) -> SpendReport:
    """Fold every run's own model calls (filtered by ``query``) into one report.

    Reads each run's own events once (a fork's inherited history is its ancestors'),
    keeping only which model each call used, who made the run, and the calls' usage.
    """
    if query is None:
        query = SpendQuery(workspace=workspace)
    elif workspace is not None:
        raise ValueError("give the workspace in the query")
    fold = _Fold(query)
    call_filters = any(
        v is not None for v in (query.model, query.provider, query.since, query.until)
    )
    cursor = None
    while True:
        page = await store.list_runs(
            workspace=query.workspace, workspaces=query.workspaces, limit=200, cursor=cursor
        )
        for record in page.runs:
            kept, matched = await _fold_run(store, record, query, fold)
            if kept and (matched or not call_filters):
                fold.report.runs += 1
        if page.next_cursor is None:
            return fold.done()
        cursor = page.next_cursor


async def _fold_run(
    store: EventStore, record: RunRecord, query: SpendQuery, fold: _Fold
) -> tuple[bool, bool]:
    """Fold one run's own calls: whether the run passed the run filters, and any call.

    A call's model is the one that answered (``model.responded``'s, else the requested
    one); its role the one its ``model.requested`` names (``main`` in older logs).
    """
    after = record.parent.seq if record.parent is not None else -1
    keys: dict[str, str] | None = None
    model, role = "unknown", "main"
    matched = False
    async for event in store.iter_events(record.id, after=after):
        data = event.data
        if event.type in ("run.created", "run.forked"):
            keys = _run_keys(record, event.actor)
            if not _run_passes(query, keys):
                return False, False
            continue
        if event.type == "model.requested":
            model, role = f"{data['provider']}:{data['model']}", data.get("role") or "main"
            continue
        if keys is None:
            continue
        if event.type == "model.responded":
            answered = data.get("provider"), data.get("model")
            used = f"{answered[0]}:{answered[1]}" if all(answered) else model
            served = data.get("role") or role
        elif event.type == "context.compacted":
            used, served = f"{data['provider']}:{data['model']}", data.get("role") or "summary"
        elif event.type == "mcp.sampled":  # a source's sampling: the run's spend too
            used, served = data["model"], "main"
        else:
            continue
        if _call_passes(query, used, event.ts):
            call = {**keys, "model": used, "provider": used.partition(":")[0], "role": served}
            fold.call(call, event.ts, data["usage"], data["cost_usd"])
            matched = True
    return keys is not None, matched
