"""Components a call shows, and the choices a person makes on options cards.

A tool's component (``ToolResult.ui``) is checked against its kind's schema
(``helix.ui``) with secrets masked, then recorded as ``ui.component`` after the call's
result; props that fail turn the result into a failure that says which field.

A call that asks the person to choose waits on ``RunChoices``: the card is logged as
``ui.component`` and ``ui.asked`` (the run shows as waiting), and the wait ends at a
``ui.chosen`` (any process may write it: ``choose``), at the end of the run, or at the
approvals deadline, which closes the card without a choice. A call re-run after a
crash finds its card by call id: the log says whether, and what, the person chose
meanwhile.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

from helix._util import redact
from helix.errors import (
    ChoiceClosedError,
    ComponentNotFoundError,
    HelixError,
    InvalidChoiceError,
    RunStateError,
)
from helix.kernel.events import (
    TERMINAL_STATUSES,
    NewEvent,
    RunPaused,
    UiAsked,
    UiChosen,
    UiComponent,
    parse_iso,
)
from helix.kernel.log import EventStore
from helix.kernel.session import SessionState
from helix.tools import ChoiceAnswer, ToolResult, UiPart
from helix.ui import validate_component

from ._asking import DEADLINE_PASSED
from ._clock import SYSTEM_CLOCK, Clock, iso_after
from ._session import LiveSession, append_checked
from ._setup import RunSetup

NOBODY_ATTENDS = "a choice needs a person to make it, and nobody attends this run"


def new_component_id() -> str:
    """A fresh component id (``cmp_`` and 12 hex digits)."""
    return f"cmp_{uuid.uuid4().hex[:12]}"


def _masked(value: Any, secrets: list[str]) -> Any:
    """``value`` with every secret in its strings masked (keys included)."""
    if isinstance(value, str):
        return redact(value, secrets, scan_env=False)
    if isinstance(value, dict):
        return {_masked(k, secrets): _masked(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(v, secrets) for v in value]
    return value


def checked_props(component: str, props: Any, secrets: list[str]) -> dict[str, Any]:
    """``props`` validated for ``component``, secrets masked; ``InvalidComponentError`` if not.

    They are bounded (size, depth) by ``validate_component`` before being walked here,
    so masking cannot be made to recurse without end; checked again after, so a mask
    cannot break the schema.
    """
    validate_component(component, props)
    return validate_component(component, _masked(props, secrets))


def checked_component(result: ToolResult, secrets: list[str]) -> ToolResult:
    """``result`` with its component's props checked (``checked_props``); a failure if invalid."""
    part = result.ui
    if part is None:
        return result
    try:
        props = checked_props(part.component, part.props, secrets)
    except HelixError as error:
        note = f"the component was not shown: {error}"
        return replace(result, ok=False, output=note, ui=None)
    return replace(result, ui=UiPart(part.component, props))


def component_event(part: UiPart, call_id: str, turn: int) -> NewEvent:
    """The ``ui.component`` a call's checked component is recorded as."""
    shown = UiComponent(
        id=new_component_id(), component=part.component, props=part.props, call_id=call_id
    )
    return NewEvent(shown, actor="agent", turn=turn)


class RunChoices:
    """The run's ``Chooser``: shows a call's options card and waits for the choice."""

    def __init__(self, setup: RunSetup, session: LiveSession, secrets: list[str]) -> None:
        self.setup = setup
        self.session = session
        self._secrets = secrets

    async def choose(self, call_id: str, props: dict[str, Any]) -> ChoiceAnswer:
        state = self.session.state
        component_id = state.choice_calls.get(call_id)
        if component_id is None:
            component_id = await self._show(call_id, props)
        if not await self._answered_in_time(component_id):
            await self._close(component_id, DEADLINE_PASSED)
        return self._answer(component_id, props)

    async def _show(self, call_id: str, props: dict[str, Any]) -> str:
        if not self.setup.attended:
            raise RunStateError(NOBODY_ATTENDS)
        checked = checked_props("options", props, self._secrets)
        component_id = new_component_id()
        turn = self.session.state.turn
        expires = iso_after(self.setup.clock, self.setup.blueprint.approvals.timeout_s)
        shown = UiComponent(id=component_id, component="options", props=checked, call_id=call_id)
        asked = UiAsked(component_id=component_id, call_id=call_id, expires_at=expires)
        await self.session.append(
            [NewEvent(shown, actor="agent", turn=turn), NewEvent(asked, turn=turn)]
        )
        return component_id

    async def _answered_in_time(self, component_id: str) -> bool:
        """Wait for a choice or the run's end; ``False`` if the deadline passed first."""
        pending = self.session.state.pending_choices.get(component_id)
        if pending is None:
            return True
        expires = None if pending.expires_at is None else parse_iso(pending.expires_at)
        remaining = None if expires is None else max(0.0, expires - self.setup.clock.now())

        def settled(state: SessionState) -> bool:
            return component_id not in state.pending_choices or state.status in TERMINAL_STATUSES

        return await self.session.wait_until(settled, remaining)

    async def _close(self, component_id: str, reason: str) -> None:
        """Close the card without a choice (unless someone chose meanwhile)."""
        turn = self.session.state.turn

        def build(state: SessionState) -> list[NewEvent] | None:
            if component_id not in state.pending_choices or state.status in TERMINAL_STATUSES:
                return None
            closed = UiChosen(
                component_id=component_id, choice=None, by="system", reason=reason, auto=True
            )
            events = [NewEvent(closed, turn=turn)]
            if state.status == "paused":  # a choice sets the status to running: stay paused
                events.append(NewEvent(RunPaused(reason="user"), turn=turn))
            return events

        await self.session.append_built(build)

    def _answer(self, component_id: str, props: dict[str, Any]) -> ChoiceAnswer:
        state = self.session.state
        made = state.choices_made.get(component_id)
        if made is None:
            return ChoiceAnswer(component_id, None, reason=f"the run is {state.status}")
        if made.choice is None:
            return ChoiceAnswer(component_id, None, by=made.by, reason=made.reason)
        labels = {c.get("id"): c.get("label") for c in props["choices"] if isinstance(c, dict)}
        label = labels.get(made.choice)
        return ChoiceAnswer(component_id, made.choice, label=label, by=made.by)


async def choose(
    store: EventStore,
    run_id: str,
    component_id: str | None,
    choice: str,
    *,
    by: str,
    clock: Clock = SYSTEM_CLOCK,
) -> str:
    """Make a choice on a waiting options card; returns the card's id.

    With no ``component_id``, the run's one waiting card is meant. A card never shown
    is ``ComponentNotFoundError``; one answered already (or closed, or that waits for
    nothing, or whose run has ended) ``ChoiceClosedError``; a choice that is not one of
    the card's ``InvalidChoiceError``.
    """
    chosen: list[str] = []

    def build(state: SessionState) -> list[NewEvent]:
        target = component_id
        if target is None:
            waiting = state.pending_choices
            if state.status in TERMINAL_STATUSES or not waiting:
                raise ChoiceClosedError(f"run {run_id!r} waits for no choice")
            if len(waiting) > 1:
                raise RunStateError(
                    f"run {run_id!r} waits for {len(waiting)} choices: name one of"
                    f" {', '.join(sorted(waiting))}"
                )
            target = next(iter(waiting))
        if target not in state.components:
            raise ComponentNotFoundError(f"run {run_id!r} showed no component {target!r}")
        if state.status in TERMINAL_STATUSES:
            raise ChoiceClosedError(f"run {run_id!r} is {state.status}: it takes no choice")
        pending = state.pending_choices.get(target)
        if pending is None:
            why = "was answered already" if target in state.choices_made else "waits for no choice"
            raise ChoiceClosedError(f"component {target!r} of run {run_id!r} {why}")
        if pending.expires_at is not None and parse_iso(pending.expires_at) <= clock.now():
            raise ChoiceClosedError(f"component {target!r} expired at {pending.expires_at}")
        if choice not in pending.choices:
            raise InvalidChoiceError(
                f"component {target!r} has no choice {choice!r}: its choices are"
                f" {', '.join(pending.choices)}"
            )
        chosen[:] = [target]
        events = [NewEvent(UiChosen(component_id=target, choice=choice, by=by), actor=by)]
        if state.status == "paused":  # a choice sets the status to running: stay paused
            events.append(NewEvent(RunPaused(reason="user"), actor=by))
        return events

    await append_checked(store, run_id, build)
    return chosen[0]
