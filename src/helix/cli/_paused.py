"""A run that paused while shown in the foreground: why, in plain words, and how to go on.

``helix run``, ``resume`` and ``fork`` stop following a run at its pause (unless
``--wait``) and print these lines; the exit code is ``EXIT_PAUSED``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helix.api import HelixApi
    from helix.kernel.session import SessionState

EXIT_PAUSED = 5
"""The exit code of a foreground command whose run paused (a limit, a person, a budget)."""

WAIT_HELP = (
    "At a pause (a turn, time or budget limit, or helix pause), keep waiting for a resume"
    " from another process instead of exiting with 5."
)


async def pause_lines(api: HelixApi, run_id: str) -> list[str]:
    """Why the run is paused and the command that resumes it, read from its log."""
    from helix.kernel.session import replay

    kernel = [e.to_kernel() async for e in api.events(run_id)]
    state = replay(kernel)
    exceeded: dict[str, Any] | None = None
    by = "someone"
    detail: str | None = None
    for event in kernel:
        if event.type == "budget.exceeded":
            exceeded = event.data
        elif event.type == "run.resumed":
            exceeded = None
        elif event.type == "run.paused":
            by = event.actor
            detail = event.data.get("detail") or None
    why, flags = _why(state, exceeded, by, detail)
    if why is None:  # a budget elsewhere: raised there, then the run goes on as it is
        return [
            f"paused: it reached a budget: {_budget(exceeded)}",
            f"resume it: raise that budget (helix budgets set …), then helix resume {run_id}",
        ]
    lines = [f"paused: {why}"]
    if state.pending_approvals:
        lines.append(f"answer its call: helix approve {run_id} · helix deny {run_id}")
    return [*lines, f"resume it: helix resume {run_id}{flags}"]


def _why(
    state: SessionState, exceeded: dict[str, Any] | None, by: str, detail: str | None
) -> tuple[str | None, str]:
    """The reason in words and the flags a resume needs (``None``: a shared budget's)."""
    reason = state.pause_reason or "unknown"
    if reason == "model_errors":  # its detail says how many replies, and the latest
        return detail or "the model's replies kept going wrong", ""
    budget = state.budget
    if reason == "max_turns" and budget is not None and budget.max_turns is not None:
        turns = budget.max_turns
        return f"it reached its turn limit (max_turns {turns})", f" --max-turns {2 * turns}"
    if reason == "max_seconds" and budget is not None and budget.max_seconds is not None:
        seconds = budget.max_seconds
        more = _elapsed_s(state) + seconds  # the limit counts from the run's creation
        return f"it reached its time limit (max_seconds {seconds:g})", f" --max-seconds {more:.0f}"
    if reason == "budget":
        scope = (exceeded or {}).get("scope")
        if scope not in (None, "run"):
            return None, ""
        words = f"it reached its budget ({_budget(exceeded)})"
        if state.over_cap == "tokens" and budget is not None and budget.tokens is not None:
            return words, f" --budget-tokens {2 * budget.tokens}"
        cap = budget.usd if budget is not None else None
        return words, f" --budget {2 * cap:g}" if cap else " --budget USD"
    if reason == "user":
        return f"paused by {by}", ""
    if reason.startswith("task_failed"):
        return f"a task failed ({reason.partition(': ')[2] or 'no detail given'})", ""
    words = {"imported": "it was imported"}.get(reason, reason)
    return (f"{words} ({detail})" if detail else words), ""


def _budget(exceeded: dict[str, Any] | None) -> str:
    from ._run_notes import budget_words

    return "no detail given" if exceeded is None else budget_words(exceeded)


def _elapsed_s(state: SessionState) -> float:
    from helix.kernel.events import parse_iso

    if state.started_at is None:
        return 0.0
    return max(0.0, time.time() - parse_iso(state.started_at))
