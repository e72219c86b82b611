"""``helix trace RUN``: the run's turns, model calls, gates and tools as a text waterfall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import print_json_line, run
from ._control import RunArg
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import Span

_WIDTH = 40
"""Characters the time axis spans."""


def trace(
    run_id: RunArg,
    json: Annotated[bool, typer.Option("--json", help="The span tree as one JSON object.")] = False,
) -> None:
    """A run's turns, model calls, gates and tools as a waterfall, its child runs nested."""

    async def main(door: Door) -> None:
        root = await door.api.trace(run_id)
        if json:
            print_json_line(root.model_dump(mode="json"))
            return
        total = max(_last(root), 1.0)
        for span, depth in _rows(root):
            typer.echo(_row(span, depth, total))

    run(lambda: with_door(main))


def _rows(span: Span, depth: int = 0) -> list[tuple[Span, int]]:
    rows = [(span, depth)]
    for child in span.children:
        rows.extend(_rows(child, depth + 1))
    return rows


def _last(span: Span) -> float:
    ends = [span.end_ms if span.end_ms is not None else span.start_ms]
    return max(ends + [_last(child) for child in span.children])


def _row(span: Span, depth: int, total: float) -> str:
    end = span.end_ms if span.end_ms is not None else total
    left = min(round(span.start_ms / total * _WIDTH), _WIDTH - 1)
    width = max(round((end - span.start_ms) / total * _WIDTH), 1)
    bar = (" " * left + "█" * width)[:_WIDTH].ljust(_WIDTH)
    name = f"turn {span.turn}" if span.kind == "turn" else f"{span.kind} {span.name}"
    label = f"{'  ' * depth}{name}"
    label = label if len(label) <= 36 else label[:35] + "…"
    took = "…" if span.duration_ms is None else f"{span.duration_ms:.0f}ms"
    extra = ""
    if span.kind in ("turn", "model", "run"):
        extra = f"  {span.input_tokens} in {span.output_tokens} out ${span.cost_usd:.4f}"
    elif span.status:
        extra = f"  {span.status}"
    return f"{label:<36} {took:>8} |{bar}|{extra}"
