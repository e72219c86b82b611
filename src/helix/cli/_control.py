"""``helix approve|deny|choose|steer|pause|cancel``: run control, from any terminal.

Each is an append to the run's log (here, or by the server); the process driving the
run acts on it within a fraction of a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import run
from ._common import who as who
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.api import ChoiceCard, Decision


RunArg = Annotated[
    str,
    typer.Argument(
        metavar="RUN", help="A run id, any unique prefix of it (run_ optional), or last."
    ),
]


def approve(
    run_id: RunArg,
    request: Annotated[str | None, typer.Argument(metavar="[REQUEST]")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (recorded in the log).")] = None,
) -> None:
    """Allow a pending tool call (the run's only pending one if REQUEST is left out)."""
    _decide(run_id, request, "allow", reason)


def deny(
    run_id: RunArg,
    request: Annotated[str | None, typer.Argument(metavar="[REQUEST]")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (the model is told).")] = None,
) -> None:
    """Refuse a pending tool call; the model is told and adapts."""
    _decide(run_id, request, "deny", reason)


def _decide(run_id: str, request: str | None, decision: Decision, reason: str | None) -> None:
    async def main(door: Door) -> None:
        decided = await door.api.decide(run_id, request, decision, reason=reason)
        verb = "allowed" if decision == "allow" else "denied"
        typer.echo(f"{verb} {decided.request_id}")

    run(lambda: with_door(main))


def choose(
    run_id: RunArg,
    first: Annotated[
        str,
        typer.Argument(
            metavar="[COMPONENT]",
            help="The card's id (cmp_…); left out, the run's only waiting card.",
        ),
    ],
    second: Annotated[
        str | None,
        typer.Argument(metavar="CHOICE", help="An option's id, or its number (from 1)."),
    ] = None,
) -> None:
    """Answer an options card the agent waits on: CHOICE is an option's id or its number."""
    component, choice = (first, second) if second is not None else (None, first)

    async def main(door: Door) -> None:
        cards = await door.api.choices(run_id)
        card = next((c for c in cards if c.component_id == component), None)
        if component is None and len(cards) == 1:
            card = cards[0]
        option = _option(card, choice) if card is not None else choice
        made = await door.api.choose(run_id, component, option)
        label = next((c.label for c in card.choices if c.id == made.choice), None) if card else None
        shown = f"{made.choice} ({label})" if label else made.choice
        typer.echo(f"chose {shown} on {made.component_id}")

    run(lambda: with_door(main))


def _option(card: ChoiceCard, choice: str) -> str:
    """The option id ``choice`` names: an id as it is, else a number counted from 1."""
    ids = [c.id for c in card.choices]
    if choice in ids or not choice.isdigit():
        return choice
    number = int(choice)
    return ids[number - 1] if 1 <= number <= len(ids) else choice


def steer(run_id: RunArg, message: Annotated[str, typer.Argument(metavar="MESSAGE")]) -> None:
    """Tell the agent something; it reads it before its next model call."""

    async def main(door: Door) -> None:
        await door.api.steer(run_id, message)
        typer.echo("sent")

    run(lambda: with_door(main))


def pause(run_id: RunArg) -> None:
    """Pause the run at its next safe point (a running tool finishes first)."""

    async def main(door: Door) -> None:
        await door.api.pause(run_id)
        typer.echo("paused")

    run(lambda: with_door(main))


def cancel(run_id: RunArg) -> None:
    """Cancel the run: a running command is killed and the run ends cancelled."""

    async def main(door: Door) -> None:
        await door.api.cancel(run_id)
        typer.echo("cancelled")

    run(lambda: with_door(main))
