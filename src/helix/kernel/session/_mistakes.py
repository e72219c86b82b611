"""The fold of a model's mistakes: ``model.rejected``, and what starts the count again.

It also folds whether the model has made a call that was not a mistake (``tool_called``).
"""

from __future__ import annotations

from typing import Any

from helix.kernel.events import Event

from ._state import Message, SessionState


def model_rejected(state: SessionState, event: Event, data: dict[str, Any]) -> None:
    """Count the mistake; a reply rejected as a whole is answered with what the model is told.

    The first rejection of a turn counts one more reply in a row gone wrong (the
    event's ``mistakes`` says the same: the runtime counts from this fold; the fold
    counts for itself, so copies of a turn in a fork cannot skew it). A rejected call's
    result is its ``tool.completed``; for a whole reply (``call_id`` null), ``message``
    follows it as a user message (the empty reply stays in the conversation: adapters
    leave out an assistant turn with nothing in it, which providers refuse), and the
    reply neither asked for tools nor ends the run.
    """
    if state.mistake_turn is None or state.mistake_turn != event.turn:
        state.mistakes += 1
    state.mistake_turn = event.turn
    state.last_mistake = data["detail"]
    if data.get("call_id") is not None:
        state.turn_calls.discard(data["call_id"])
        return
    if data.get("message"):
        state.messages.append(Message("user", data["message"]))
    state.last_reply_had_calls = None


def turn_ended(state: SessionState, turn: int) -> None:
    """A turn that ends with no rejection in it was a reply that went right.

    One that ends with a call of its reply not rejected means the model has called a
    tool (``tool_called``): a forced tool choice is satisfied.
    """
    if state.mistake_turn != turn:
        forget(state)
    if state.turn_calls:
        state.tool_called = True
    state.turn_calls.clear()


def forget(state: SessionState) -> None:
    """Start the count of mistakes again (a good reply; a resume after a pause)."""
    state.mistakes, state.mistake_turn, state.last_mistake = 0, None, None
