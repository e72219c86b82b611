"""How a run-level event reads in a transcript: one ``Note`` each.

Created, paused, a plugin reloaded, an MCP server failed, …: ``NOTES`` by event type,
shared by the terminal view and the TUI through ``Transcript``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Tone = Literal["info", "good", "warn", "bad"]


@dataclass
class Note:
    """Something that happened to the run: created, forked, paused, failed, a restart."""

    kind: str
    text: str
    tone: Tone
    turn: int | None = None
    run_id: str | None = None
    """The other run it names: a child spawned, a fork's parent."""


def budget_words(data: dict[str, Any]) -> str:
    """What a ``budget.exceeded`` says: which budget, how much of which cap.

    ``$0.0120 spent of $0.0100`` for the run's own USD cap (no ``scope``);
    ``workspace:team's month budget: 1200 of 1000 tokens`` for a cumulative one.
    """
    if data.get("cap_tokens") is not None:
        amount = f"{data.get('spent_tokens') or 0} of {data['cap_tokens']} tokens"
    else:
        cap = data.get("cap_usd")
        amount = f"${data['spent_usd']:.4f} spent of " + ("-" if cap is None else f"${cap:.4f}")
    scope = data.get("scope")
    if scope is None:
        return amount
    whose = "the run's own cap" if scope == "run" else f"{scope}'s {data.get('period')} budget"
    return f"{whose}: {amount}"


_WENT_WRONG = {
    "malformed_arguments": "the model's reply was malformed",
    "unknown_tool": "the model called a tool the run does not have",
    "invalid_arguments": "the model's arguments do not fit the tool",
    "empty_reply": "the model's reply was empty",
    "no_tool_call": "the model did not make the tool call it was asked for",
}


def rejected_words(data: dict[str, Any]) -> str:
    """What a ``model.rejected`` says: what went wrong, that the model was told, the count.

    ``the model's reply was malformed: the arguments of 'write_file' are not JSON (…)
    (told the model; 1 of 5)``; without a limit, ``(told the model; 3 in a row)``.
    """
    went = _WENT_WRONG.get(str(data.get("reason")), "the model's reply went wrong")
    limit = data.get("limit")
    count = f"{data['mistakes']} of {limit}" if limit else f"{data['mistakes']} in a row"
    return f"{went}: {data['detail']} (told the model; {count})"


def paused_words(data: dict[str, Any]) -> str:
    """``paused (user)``; with its detail when it has one: ``paused (model_errors: …)``."""
    detail = data.get("detail")
    return f"paused ({data['reason']}: {detail})" if detail else f"paused ({data['reason']})"


def _sampled(data: dict[str, Any]) -> Note:
    usage, cost = data["usage"], data.get("cost_usd")
    spent = f"${cost:.4f}" if cost is not None else "price unknown"
    tokens = f"{usage['input_tokens']}+{usage['output_tokens']} tokens, {spent}"
    text = f"{data['source']} had {data['model']} answer a prompt ({tokens}): {data['text']}"
    return Note("sampled", text, "info")


def _resumed(data: dict[str, Any]) -> Note:
    by = data.get("by")
    return Note("resumed", f"resumed by {by}" if by else "resumed after a restart", "info")


def _mcp_started(data: dict[str, Any]) -> str:
    again = f", restart {data['restarts']}" if data.get("restarts") else ""
    where = f" in {data['tier']}" if data.get("tier") else ""
    tools = ", ".join(data["tools"]) or "no tools"
    return f"MCP server {data['server']} ({data['transport']}{where}{again}): {tools}"


def _mcp_changed(data: dict[str, Any]) -> str:
    parts = [f"+{n}" for n in data["added"]] + [f"-{n}" for n in data["removed"]]
    return f"MCP server {data['server']} tools changed: {' '.join(parts) or 'same names'}"


def _rolled_back(data: dict[str, Any]) -> Note:
    restored, removed = len(data.get("restored", [])), len(data.get("removed", []))
    text = f"the world rolled back to turn {data['to_turn']} by {data['by']}"
    text += f" ({restored} restored, {removed} removed)"
    conflicts = data.get("conflicts") or []
    if conflicts:
        text += f"; {len(conflicts)} left as they were: " + "; ".join(
            f"{c['path']}: {c['detail']}" for c in conflicts
        )
    return Note("rollback", text, "warn" if conflicts else "info")


def _kept(data: dict[str, Any]) -> Note:
    text = f"the world of {data['branch']} kept into {data['target']} by {data['by']}"
    conflicts = data.get("conflicts") or []
    if conflicts:
        text += f"; {len(conflicts)} left as they were"
    return Note("kept", text, "warn" if conflicts else "good")


def _branched(data: dict[str, Any]) -> Note:
    ids = ", ".join(b["run_id"] for b in data["branches"])
    text = f"branched {len(data['branches'])} ways at turn {data['turn']}: {ids}"
    return Note("branched", f"{text} (judged by {data['judge']})", "info")


def _scored(data: dict[str, Any]) -> Note:
    score = "no score" if data["score"] is None else f"score {data['score']:g}"
    tone: Tone = "good" if data["score"] else "warn"
    return Note("scored", f"branch {data['branch']} {data['status']}: {score}", tone)


def _chosen(data: dict[str, Any]) -> Note:
    if data["branch"] is None:
        return Note("chosen", f"no branch kept: {data['reason']}", "bad")
    return Note("chosen", f"kept branch {data['branch']}: {data['reason']}", "good")


_LOST = {"expired": "its driver stopped renewing", "holder_gone": "its driver's process ended"}
"""Why a run's driver was replaced (``lease.taken_over``'s ``reason``), as said to a person."""

NOTES: dict[str, Callable[[dict[str, Any]], Note]] = {
    "run.resumed": _resumed,
    "run.paused": lambda d: Note("paused", paused_words(d), "warn"),
    "run.completed": lambda d: Note("completed", str(d["summary"]), "good"),
    "run.failed": lambda d: Note("failed", str(d["error"]), "bad"),
    "run.cancelled": lambda d: Note("cancelled", f"cancelled by {d['by']}", "bad"),
    "budget.exceeded": lambda d: Note("budget", f"budget reached: {budget_words(d)}", "warn"),
    "supervisor.restarted": lambda d: Note(
        "restart", f"{d['component']} restarted (attempt {d['attempt']}): {d['reason']}", "warn"
    ),
    "lease.taken_over": lambda d: Note(
        "takeover",
        f"another process took the run over ({_LOST[d['reason']]}): {d['holder']}",
        "warn",
    ),
    "world.rolled_back": _rolled_back,
    "world.kept": _kept,
    "world.file_skipped": lambda d: Note(
        "skipped", f"{d['path']} left out of snapshots: {d['reason']} ({d['size']} bytes)", "warn"
    ),
    "effect.recorded": lambda d: Note(
        "effect",
        f"{d['tool']} {d['kind']}: {d['summary']}",
        "warn" if d["kind"] == "irreversible" else "info",
    ),
    "effect.settled": lambda d: Note(
        "effect",
        f"{d['call_id']} {d['outcome']}: {d['detail']}",
        "bad" if d["outcome"] == "failed" else "info",
    ),
    "plugin.loaded": lambda d: Note("plugin", f"plugin {d['name']} {d['version']} loaded", "info"),
    "plugin.reloaded": lambda d: Note(
        "plugin",
        f"plugin {d['name']} {d['previous']} → {d['version']} ({d['reason']}),"
        " serving from the next turn",
        "info",
    ),
    "plugin.failed": lambda d: Note(
        "plugin",
        f"plugin {d['name']}: {d['error']}"
        + (f" ({d['serving']} keeps serving)" if d.get("serving") else ""),
        "bad" if not d.get("serving") else "warn",
    ),
    "mcp.server.started": lambda d: Note("mcp", _mcp_started(d), "info"),
    "mcp.server.stopped": lambda d: Note("mcp", f"MCP server {d['server']} stopped", "info"),
    "mcp.server.failed": lambda d: Note(
        "mcp",
        f"MCP server {d['server']} failed: {d['reason']}"
        + (" (no more restarts)" if d.get("gave_up") else ""),
        "bad" if d.get("gave_up") else "warn",
    ),
    "mcp.tools.changed": lambda d: Note("mcp", _mcp_changed(d), "info"),
    "mcp.egress.decided": lambda d: Note(
        "mcp",
        f"MCP server {d['server']} {d['verdict']} {d['host']}:{d['port']}: {d['reason']}",
        "info" if d["verdict"] == "allow" else "warn",
    ),
    "strategy.branched": _branched,
    "strategy.scored": _scored,
    "strategy.chosen": _chosen,
    "mcp.sampled": _sampled,
    "mcp.sample_refused": lambda d: Note(
        "sampling", f"{d['source']}: sampling refused: {d['reason']}", "warn"
    ),
}
"""How each run-level event reads, by type; types not here make no block."""
