"""A run's events folded into what a person reads: said text, tool calls, notes.

A pure fold (no I/O): ``Transcript.add(event)`` takes the events in order and returns
the block that became complete with it, if any; ``pending()`` is what is still open (a
call running or waiting for a decision). Blocks are mutable: a call completed before
its ``file.changed`` events is still updated by them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helix.api import RunEvent


@dataclass
class Said:
    """The agent's text, in full."""

    turn: int | None
    text: str


@dataclass
class Call:
    """One tool call, from its request to its result."""

    turn: int | None
    call_id: str
    name: str
    args: dict[str, Any]
    verdict: str = "allow"
    """``allow`` unless a gate asked (``ask``) or refused (``deny``)."""
    gate: str | None = None
    """The gate that asked or refused."""
    why: str | None = None
    """What that gate said."""
    request_id: str | None = None
    decision: str | None = None
    """``allow`` or ``deny``: a person's (or the deadline's) answer to an ask."""
    decided_by: str | None = None
    ok: bool | None = None
    output: str | None = None
    changed: list[str] = field(default_factory=list[str])
    """The world's paths the call created, edited or removed."""
    diff: str | None = None
    """A unified diff of ``changed`` over the call's turn, once fetched."""
    done: bool = False


@dataclass
class Note:
    """Something that happened to the run: a turn, a steer, a pause, its end."""

    turn: int | None
    kind: str
    text: str


Block = Said | Call | Note

_NOTES = {
    "run.paused": "paused: {reason}",
    "run.resumed": "resumed",
    "run.completed": "completed",
    "run.failed": "failed: {error}",
    "run.cancelled": "cancelled by {by}",
    "run.forked": "forked from {parent[run_id]} at turn {turn}",
    "budget.exceeded": "budget exceeded: spent ${spent_usd} of ${cap_usd}",
    "world.rolled_back": "world rolled back to turn {to_turn} by {by}",
    "steer.received": "steer: {message}",
    "agent.spawned": "spawned {child_run_id}: {objective}",
    "agent.reported": "{child_run_id} reported: {report}",
}


class Transcript:
    """The fold: feed events in seq order, read blocks."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self._calls: dict[str, Call] = {}

    def pending(self) -> list[Call]:
        """Calls requested and not yet finished (running, or waiting for a decision)."""
        return [call for call in self._calls.values() if not call.done]

    def call(self, call_id: str) -> Call | None:
        """The call with this id, if it was requested."""
        return self._calls.get(call_id)

    def add(self, event: RunEvent) -> Block | None:
        """Fold one event; the block it completed, if any."""
        data = event.data
        kind = event.type
        if kind == "model.responded":
            for spec in data.get("tool_calls", []):
                self._open(event.turn, str(spec["id"]), str(spec["name"]), spec.get("args", {}))
            text = str(data.get("text") or "").strip()
            return self._keep(Said(event.turn, text)) if text else None
        if kind == "tool.requested":
            self._open(event.turn, str(data["call_id"]), str(data["name"]), data.get("args", {}))
            return None
        call = self._calls.get(str(data.get("call_id", "")))
        if call is not None:
            return self._call_event(call, event)
        if kind == "approval.decided":
            for open_call in self._calls.values():
                if open_call.request_id == data.get("request_id"):
                    open_call.decision = str(data["decision"])
                    open_call.decided_by = str(data.get("by") or "")
            return None
        if kind == "turn.started":
            return self._keep(Note(event.turn, kind, f"turn {data.get('turn', event.turn)}"))
        template = _NOTES.get(kind)
        if template is None:
            return None
        try:
            text = template.format(**data)
        except (KeyError, IndexError):
            text = kind
        return self._keep(Note(event.turn, kind, text))

    def _open(self, turn: int | None, call_id: str, name: str, args: Any) -> None:
        if call_id not in self._calls:
            self._calls[call_id] = Call(turn, call_id, name, dict(args or {}))

    def _keep(self, block: Block) -> Block:
        self.blocks.append(block)
        return block

    def _call_event(self, call: Call, event: RunEvent) -> Block | None:
        data = event.data
        if event.type == "gate.decided" and data.get("verdict") in ("ask", "deny"):
            if call.verdict != "deny":
                call.verdict, call.gate = str(data["verdict"]), str(data.get("gate"))
                call.why = str(data.get("reason") or "")
        elif event.type == "approval.requested":
            call.request_id = str(data["request_id"])
        elif event.type == "file.changed":
            path = str(data["path"])
            if path not in call.changed:
                call.changed.append(path)
        elif event.type in ("tool.completed", "tool.interrupted"):
            if event.type == "tool.completed":
                call.ok, call.output = bool(data.get("ok")), str(data.get("output") or "")
            elif event.type == "tool.interrupted":
                call.ok, call.output = False, f"interrupted: {data.get('reason')}"
            if not call.done:
                call.done = True
                return self._keep(call)
        return None
