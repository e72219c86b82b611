"""``helix approve|deny|choose|steer|pause|cancel``: run control, from any terminal.

Each is an append to the run's log (here, or by the server); the process driving the
run acts on it within a fraction of a second.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

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
    answer: Annotated[
        list[str] | None,
        typer.Option(
            "--answer",
            metavar="NAME=VALUE",
            help="A field of a question's answer, typed by its schema (repeat for each).",
        ),
    ] = None,
    answer_json: Annotated[
        str | None,
        typer.Option(
            "--answer-json", metavar="JSON", help="A question's answer as one JSON object."
        ),
    ] = None,
) -> None:
    """Allow a pending tool call, or answer a source's question (--answer NAME=VALUE).

    Leave REQUEST out for the run's only pending request. A question (an MCP server
    eliciting) is answered with its fields; an answer that does not fit its schema is
    refused (exit 2) and nothing is recorded. ``helix deny`` declines a question.
    """
    _decide(run_id, request, "allow", reason, answer or [], answer_json)


def deny(
    run_id: RunArg,
    request: Annotated[str | None, typer.Argument(metavar="[REQUEST]")] = None,
    reason: Annotated[str | None, typer.Option(help="Why (the model is told).")] = None,
) -> None:
    """Refuse a pending tool call (or decline a question); the model is told and adapts."""
    _decide(run_id, request, "deny", reason, [], None)


def _decide(
    run_id: str,
    request: str | None,
    decision: Decision,
    reason: str | None,
    fields: list[str],
    answer_json: str | None,
) -> None:
    async def main(door: Door) -> None:
        answer = None
        if fields or answer_json is not None:
            answer = await _answer(door, run_id, request, fields, answer_json)
        decided = await door.api.decide(run_id, request, decision, reason=reason, answer=answer)
        verb = "allowed" if decision == "allow" else "denied"
        if answer is not None:
            verb = "answered"
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


async def _answer(
    door: Door, run_id: str, request: str | None, fields: list[str], answer_json: str | None
) -> dict[str, Any]:
    """The answer the options give, typed by the question's schema.

    A malformed option is an ``InvalidAnswerError`` (a usage error, exit 2), raised
    inside the command so that its store is closed as after any refusal.
    """
    from helix.errors import InvalidAnswerError

    answer: dict[str, Any] = {}
    if answer_json is not None:
        try:
            parsed = json.loads(answer_json)
        except ValueError as error:
            raise InvalidAnswerError(f"--answer-json is not JSON: {error}") from None
        if not isinstance(parsed, dict):
            raise InvalidAnswerError("--answer-json must be a JSON object of the question's fields")
        answer.update(parsed)
    if not fields:
        return answer
    pending = await door.api.approvals(run_id)
    chosen = [a for a in pending if request is None or a.request_id == request]
    if len(chosen) != 1:
        return answer | dict(_field(f, {}) for f in fields)  # the decision says what is wrong
    question = chosen[0].question
    schema = question.fields if question is not None else {}
    return answer | dict(_field(f, schema) for f in fields)


def _field(option: str, schema: dict[str, Any]) -> tuple[str, Any]:
    from helix.errors import InvalidAnswerError
    from helix.kernel.events import parse_field

    name, equals, text = option.partition("=")
    if not equals or not name:
        raise InvalidAnswerError(f"--answer {option!r}: give NAME=VALUE")
    if not schema:
        return name, text
    try:
        return name, parse_field(schema, name, text)
    except ValueError as error:
        raise InvalidAnswerError(f"--answer: {error}") from None


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
