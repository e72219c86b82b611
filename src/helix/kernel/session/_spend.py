"""Spend summed across runs: per provider, per blueprint, per model, per person."""

from __future__ import annotations

from dataclasses import dataclass, field

from helix.kernel.log import EventStore

from ._replay import replay_run
from ._state import Usage


@dataclass
class SpendReport:
    """Tokens and USD by provider, by ``provider:model``, by blueprint and by person.

    A run's person is who created it (its ``run.created`` actor: ``user:ann``, or
    ``system`` for a child or a scripted start); a fork's, who forked it.

    Each run counts its own calls only, so a fork's inherited history is not counted
    twice. ``unpriced_calls`` counts calls whose price was unknown.
    """

    runs: int = 0
    total: Usage = field(default_factory=Usage)
    by_provider: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_model: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_blueprint: dict[str, Usage] = field(default_factory=dict[str, Usage])
    by_person: dict[str, Usage] = field(default_factory=dict[str, Usage])


def _add(into: Usage, usage: Usage) -> None:
    into.input_tokens += usage.input_tokens
    into.output_tokens += usage.output_tokens
    into.cost_usd += usage.cost_usd
    into.unpriced_calls += usage.unpriced_calls


async def spend(store: EventStore, *, workspace: str | None = None) -> SpendReport:
    """Replay every run (of a workspace) and sum what its own model calls cost."""
    report = SpendReport()
    cursor = None
    while True:
        page = await store.list_runs(workspace=workspace, limit=200, cursor=cursor)
        for record in page.runs:
            state = await replay_run(store, record.id)
            report.runs += 1
            _add(report.total, state.own_usage)
            blueprint = record.blueprint or "(none)"
            _add(report.by_blueprint.setdefault(blueprint, Usage()), state.own_usage)
            person = state.created_by or "(unknown)"
            _add(report.by_person.setdefault(person, Usage()), state.own_usage)
            for model, usage in state.usage_by_model.items():
                _add(report.by_model.setdefault(model, Usage()), usage)
                provider = model.partition(":")[0]
                _add(report.by_provider.setdefault(provider, Usage()), usage)
        if page.next_cursor is None:
            return report
        cursor = page.next_cursor
