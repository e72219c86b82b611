"""When the model gets it wrong: its mistakes go back to it, counted, and pause the run.

A reply goes wrong when a call's arguments do not parse (``malformed_arguments``), it
calls a tool the run does not have (``unknown_tool``), its arguments do not fit the
tool's schema (``invalid_arguments``), it holds no text and no call (``empty_reply``),
or it does not call the tool a forced tool choice asks for (``no_tool_call``: text
only, or calls of other tools than the one named; ``_forced.py``). None of these fails
the run: the gates deny such a call, and its result tells the model why; a reply wrong
as a whole is answered with a message on the next call. Each is logged as
``model.rejected`` with the count of replies in a row that went wrong; at the
blueprint's ``model_errors.pause_after`` the run pauses between turns (reason
``model_errors``), and a resume starts the count again.
"""

from __future__ import annotations

from helix.kernel.events import MistakeKind, ModelRejected, NewEvent, RunPaused
from helix.kernel.session import CallRequest, SessionState
from helix.providers import ModelResponse, ToolChoice
from helix.tools import ToolDef

from ._blueprint import Blueprint
from ._forced import is_forced

EMPTY_REPLY_MESSAGE = (
    "Your last reply was empty: it held no text and no tool call. Go on with the task:"
    " call one of your tools, or, if the task is done, reply with a short summary of"
    " what you did."
)
"""What the model is told on its next call after an empty reply."""


def no_call_message(choice: ToolChoice) -> str:
    """What the model is told after replying with text only where ``choice`` forced a call."""
    if choice == "required":
        return (
            "You were asked to call one of your tools and replied with text only. Call one"
            " of them now."
        )
    return f"You were asked to call the tool {choice} and replied with text only. Call it now."


def fault_of(
    call: CallRequest, tool: ToolDef | None, valid: bool, forced: str | None = None
) -> MistakeKind | None:
    """The model's mistake in ``call``, if the call is one (``valid``: its arguments fit).

    ``forced``: the one tool the model must call now (``_forced.forced_tool``).
    """
    if call.malformed is not None:
        return "malformed_arguments"
    if tool is None:
        return "unknown_tool"
    if forced is not None and call.name != forced:
        return "no_tool_call"
    return None if valid else "invalid_arguments"


def rejected_call(
    state: SessionState,
    blueprint: Blueprint,
    call: CallRequest,
    fault: MistakeKind,
    reason: str,
    turn: int,
) -> NewEvent:
    """The ``model.rejected`` of a call the gates denied for the model's mistake.

    ``reason`` is the denying gate's (what the call's result tells the model); the
    detail is the parse error itself for arguments that did not parse.
    """
    detail = call.malformed if fault == "malformed_arguments" and call.malformed else reason
    return _rejected(state, blueprint, fault, detail, turn, call_id=call.id)


def rejected_reply(
    state: SessionState,
    blueprint: Blueprint,
    response: ModelResponse,
    turn: int,
    choice: ToolChoice = "auto",
) -> list[NewEvent]:
    """A ``model.rejected`` for a reply wrong as a whole (else nothing).

    One with no text and no call; or, where the request's ``choice`` forced a call
    (``required``, a tool's name), one with text and no call.
    """
    if response.tool_calls:
        return []
    if not response.text.strip():
        detail = f"no text and no tool call (stop reason: {response.stop_reason})"
        empty = _rejected(
            state, blueprint, "empty_reply", detail, turn, message=EMPTY_REPLY_MESSAGE
        )
        return [empty]
    if not is_forced(choice):
        return []
    detail = f"text and no tool call, where the request forced one (tool_choice: {choice})"
    told = no_call_message(choice)
    return [_rejected(state, blueprint, "no_tool_call", detail, turn, message=told)]


def mistakes_pause(state: SessionState, blueprint: Blueprint) -> RunPaused | None:
    """The pause due once the model's replies went wrong ``pause_after`` times in a row."""
    limit = blueprint.model_errors.pause_after
    if limit is None or state.mistakes < limit:
        return None
    replies = "reply" if state.mistakes == 1 else f"{state.mistakes} replies in a row"
    detail = (
        f"the model's last {replies} went wrong, and it was told each time (the latest:"
        f" {state.last_mistake}); a resume goes on and starts the count again"
    )
    return RunPaused(reason="model_errors", detail=detail)


def _rejected(
    state: SessionState,
    blueprint: Blueprint,
    reason: MistakeKind,
    detail: str,
    turn: int,
    *,
    call_id: str | None = None,
    message: str | None = None,
) -> NewEvent:
    mistakes = state.mistakes + (0 if state.mistake_turn == turn else 1)
    payload = ModelRejected(
        reason=reason,
        detail=detail,
        call_id=call_id,
        message=message,
        mistakes=mistakes,
        limit=blueprint.model_errors.pause_after,
    )
    return NewEvent(payload, turn=turn)
