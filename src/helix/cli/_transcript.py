"""A run's events folded into what a person reads: messages, tool calls, run notes.

Pure data (no terminal, no widgets): the terminal view (``helix run``, ``helix replay``)
and the TUI both fold ``RunEvent`` s through a ``Transcript`` and draw its blocks.

- ``Said``: the agent's message (in full), a person's steer, or a system line.
- ``Call``: one tool call, from its request through every gate, its approval, its run,
  its result and the files it changed.
- ``Note``: something that happened to the run (created, paused, failed, …).
- ``Shown``: a UI component the agent showed (a table, a diff, an options card that
  may wait for a person's choice, …).

A tool source's question (an MCP elicitation) belongs to the call it came during: the
call waits with ``question`` set, then lists it in ``asked`` with its answer. A
source's sampling is a ``Note``, its tokens and cost counted in the run's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from helix.kernel.events import STATUS_AFTER

from ._run_notes import NOTES, rejected_words
from ._run_notes import Note as Note
from ._run_notes import Tone as Tone

if TYPE_CHECKING:
    from helix.api import RunEvent

Who = Literal["agent", "person", "system"]
Verdict = Literal["allow", "ask", "deny"]
CallState = Literal["requested", "waiting", "running", "ok", "error", "denied", "interrupted"]

SUMMARY_WIDTH = 100
"""Characters of a call's one-line argument summary."""

_EXIT = re.compile(r"\[exit code (-?\d+)\]\s*$")
_SIGNAL = re.compile(r"\[killed by signal (\d+)\]\s*$")
_RANK: dict[Verdict, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass
class FileEdit:
    """A file a call created, modified or deleted; digests of its content before and after."""

    path: str
    op: Literal["create", "modify", "delete"]
    before: str | None
    after: str | None


@dataclass
class Said:
    """Text: the agent's message (full, never clipped), a person's steer, or a system line."""

    turn: int | None
    who: Who
    text: str


@dataclass
class Call:
    """One tool call, folded from its request to its result."""

    call_id: str
    turn: int | None
    name: str
    args: dict[str, Any]
    summary: str
    """The arguments summarised on one line."""
    verdict: Verdict | None = None
    """The gates' overall verdict: the strictest of them (``None`` until one decided)."""
    reasons: list[str] = field(default_factory=list[str])
    """``gate: reason`` of each gate that asked or denied."""
    request_id: str | None = None
    decision: str | None = None
    """``allow`` or ``deny`` once a person (or a deadline) answered the ask."""
    decided_by: str | None = None
    state: CallState = "requested"
    output: str = ""
    exit_code: int | None = None
    """A command's exit code, read from its output's footer (negative: killed by a signal)."""
    files: list[FileEdit] = field(default_factory=list[FileEdit])
    gates: list[str] = field(default_factory=list[str])
    """Every gate that decided, in order (the allows too)."""
    sandbox: str | None = None
    """The sandbox tier the call ran in."""
    duration_ms: float | None = None
    auto: bool = False
    """The ask was answered by no person (its deadline, or auto-approve)."""
    child_run_id: str | None = None
    """The run a delegating call started."""
    egress: str = ""
    """The connections a command attempted, on one line (empty: none)."""
    run_id: str | None = None
    """The run whose log holds the call (a fork's first calls are its parent's)."""
    question: dict[str, Any] | None = None
    """A tool source's question waiting for a person (``{source, message, schema}``)."""
    asked: list[str] = field(default_factory=list[str])
    """The source's questions during the call, each with how it was answered."""

    @property
    def done(self) -> bool:
        """Whether the call has its end: a result, a denial or an interruption."""
        return self.state in ("ok", "error", "denied", "interrupted")


@dataclass
class Shown:
    """A generative UI component the agent showed; an options card may wait for a choice."""

    turn: int | None
    component_id: str | None
    kind: str
    """``table``, ``diff``, ``options``, ``markdown``, ``chart``, or a plugin's kind."""
    props: dict[str, Any]
    call_id: str | None = None
    waiting: bool = False
    """An options card waiting for a person's choice (``ask_choice``)."""
    expires_at: str | None = None
    choice: str | None = None
    """The option chosen, once one was."""
    chosen_by: str | None = None
    closed: str | None = None
    """Why the card's wait ended without a choice."""

    def label(self, choice: str | None) -> str:
        """An option's label (its id when it has none here)."""
        for option in self.props.get("choices") or []:
            if isinstance(option, dict) and option.get("id") == choice:
                return str(option.get("label") or choice)
        return str(choice)

    def number(self, choice: str) -> int:
        """An option's number, counted from 1 (what ``helix choose`` takes)."""
        ids = [o.get("id") for o in self.props.get("choices") or [] if isinstance(o, dict)]
        return ids.index(choice) + 1 if choice in ids else 0


Block = Said | Call | Note | Shown


def summarize_args(args: dict[str, Any], width: int = SUMMARY_WIDTH) -> str:
    """``path=a.txt content='hello…'`` on one line, cut at ``width`` characters."""
    parts: list[str] = []
    for key, value in args.items():
        shown = value if isinstance(value, str) else repr(value)
        text = " ".join(str(shown).split())
        plain = bool(text) and text == value and len(text) <= 60 and "'" not in text
        if isinstance(value, str) and len(args) > 1 and not plain:
            text = repr(text if len(text) <= 60 else text[:59] + "…")
        parts.append(text if len(args) == 1 else f"{key}={text}")
    line = " ".join(parts)
    return line if len(line) <= width else line[: width - 1] + "…"


def _one_line(text: str, width: int = SUMMARY_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


_CONTROLS = {
    **{code: chr(0x2400 + code) for code in range(32) if code not in (9, 10)},
    0x7F: "\u2421",
    **{code: "\ufffd" for code in range(0x80, 0xA0)},
}


def printable(text: str) -> str:
    """``text`` safe to print on a terminal, newlines and tabs kept.

    Control characters (an escape sequence an agent or a command wrote) are shown as
    symbols, never obeyed.
    """
    return text.translate(_CONTROLS)


def exit_code_of(output: str) -> int | None:
    """The exit code a command's output ends with (``[exit code N]``), else ``None``."""
    found = _EXIT.search(output)
    if found:
        return int(found.group(1))
    killed = _SIGNAL.search(output)
    return -int(killed.group(1)) if killed else None


class Transcript:
    """One run's blocks, in the order they happened, with its status and spend."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.blocks: list[Block] = []
        self.status = "queued"
        self.turn: int | None = None
        self.cost_usd = 0.0
        self.input_tokens = 0
        self.output_tokens = 0
        self.head = -1
        """The seq of the last event folded."""
        self.objective = ""
        self.model = ""
        self.world = ""
        self.budget_usd: float | None = None
        self.auto_approve = False
        """Whether the run allows what the gates would ask about (its asks need nobody)."""
        self.ended_turns: list[int] = []
        """The turns whose ``turn.ended`` was folded: points of the world and forks."""
        self.thinking = False
        """A model call is under way (requested, not yet answered)."""
        self.ending: Note | None = None
        """The note of how the run ended or stopped: completed, failed, cancelled, paused."""
        self._calls: dict[str, Call] = {}
        self._requests: dict[str, Call] = {}
        self._shown: dict[str, Shown] = {}

    def add(self, event: RunEvent) -> Block | None:
        """Fold one event; the block it created or updated (``None``: it changes no block)."""
        self.head = max(self.head, event.seq)
        self.status = STATUS_AFTER.get(event.type, self.status)
        if event.turn is not None:
            self.turn = event.turn if self.turn is None else max(self.turn, event.turn)
        data = event.data
        if event.type == "turn.ended":
            self.ended_turns.append(int(data["turn"]))
            return None
        if event.type.startswith(("tool.", "gate.", "approval.", "file.", "egress.")):
            block = self._call_event(event.type, event.turn, data)
            if event.type == "tool.requested" and isinstance(block, Call):
                block.run_id = event.run_id
            return block
        if event.type.startswith("model."):
            return self._model_event(event.type, event.turn, data)
        if event.type == "steer.received":
            return self._append(Said(event.turn, "person", str(data["message"])))
        if event.type == "agent.spawned":
            return self._spawned(event.turn, data)
        if event.type.startswith("ui."):
            return self._ui_event(event.type, event.turn, data)
        block = self._note(event.type, data)
        if block is None:
            return None
        block.turn = event.turn
        if event.type in ("run.completed", "run.failed", "run.cancelled", "run.paused"):
            self.ending = block
        elif event.type in ("run.resumed", "run.started"):
            self.ending = None
        return self._append(block)

    @property
    def files_changed(self) -> list[str]:
        """Every path a call changed, once each, in the order first changed."""
        seen: dict[str, None] = {}
        for block in self.blocks:
            if isinstance(block, Call):
                for change in block.files:
                    seen.setdefault(change.path, None)
        return list(seen)

    def pending(self) -> list[Call]:
        """The calls waiting on a person's decision."""
        return [call for call in self._calls.values() if call.state == "waiting"]

    def waiting_cards(self) -> list[Shown]:
        """The options cards waiting on a person's choice."""
        return [shown for shown in self._shown.values() if shown.waiting]

    def call(self, call_id: str) -> Call | None:
        """The call of this id, if it was requested."""
        return self._calls.get(call_id)

    # -- folding ------------------------------------------------------------------------

    def _append(self, block: Block) -> Block:
        self.blocks.append(block)
        return block

    def _model_event(self, kind: str, turn: int | None, data: dict[str, Any]) -> Block | None:
        if kind == "model.requested":
            self.thinking = True
            return None
        self.thinking = False
        if kind == "model.failed":
            retry = data.get("retry_in_s")
            then = f"; again in {retry:g}s" if retry is not None else ""
            text = f"the model call failed (attempt {data['attempt']}): {data['error']}{then}"
            return self._append(Note("model", text, "warn", turn))
        if kind == "model.rejected":
            return self._append(Note("rejected", rejected_words(data), "warn", turn))
        usage = data.get("usage") or {}
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.cost_usd += float(data.get("cost_usd") or 0.0)
        text = str(data.get("text") or "")
        return self._append(Said(turn, "agent", text)) if text.strip() else None

    def _call_event(self, kind: str, turn: int | None, data: dict[str, Any]) -> Block | None:
        if kind == "tool.requested":
            args = dict(data["args"])
            raw = data.get("raw_args")  # a malformed call: the text the model sent
            summary = summarize_args(args) if raw is None else _one_line(str(raw))
            call = Call(str(data["call_id"]), turn, str(data["name"]), args, summary)
            self._calls[call.call_id] = call
            return self._append(call)
        if kind == "approval.decided":
            found = self._requests.get(str(data["request_id"]))
            if found is not None and found.question is not None:
                found.asked.append(answered(found.question, data))
                found.question, found.state = None, "running"  # the call goes on
            elif found is not None:
                found.decision = str(data["decision"])
                found.decided_by = str(data["by"])
                found.auto = bool(data.get("auto", False))
                found.state = "denied" if found.decision == "deny" else "running"
            return found
        known = self._calls.get(str(data.get("call_id")))
        if known is None:
            return None  # its request is before the events folded (a fork's, a page's)
        return self._update(known, kind, data)

    def _update(self, call: Call, kind: str, data: dict[str, Any]) -> Call:
        if kind == "gate.decided":
            verdict: Verdict = data["verdict"]
            call.gates.append(str(data["gate"]))
            if call.verdict is None or _RANK[verdict] > _RANK[call.verdict]:
                call.verdict = verdict
            if verdict != "allow":
                call.reasons.append(f"{data['gate']}: {data['reason']}")
            if verdict == "deny":
                call.state = "denied"
        elif kind == "approval.requested":
            call.request_id = str(data["request_id"])
            call.state = "waiting"
            asked = data.get("question")
            call.question = (
                None if asked is None else {**asked, "name": data["name"], "args": data["args"]}
            )
            self._requests[call.request_id] = call
        elif kind == "tool.started":
            call.state = "running"
            call.sandbox = str(data.get("sandbox"))
        elif kind == "tool.completed":
            call.output = str(data["output"])
            call.duration_ms = float(data.get("duration_ms") or 0.0)
            call.exit_code = exit_code_of(call.output)
            refused = call.verdict == "deny" or call.decision == "deny"
            call.state = "denied" if refused else ("ok" if data["ok"] else "error")
        elif kind == "tool.interrupted":
            call.state = "interrupted"
            call.output = str(data["reason"])
        elif kind == "file.changed":
            call.files.append(
                FileEdit(str(data["path"]), data["op"], data.get("before"), data.get("after"))
            )
        elif kind == "egress.counted":
            hosts = [f"{h['host']} {h['verdict']} ({h['attempts']} tries)" for h in data["hosts"]]
            others = int(data.get("other_attempts") or 0)
            call.egress = ", ".join(hosts) + (f"; {others} more elsewhere" if others else "")
        return call

    def _ui_event(self, kind: str, turn: int | None, data: dict[str, Any]) -> Block | None:
        if kind == "ui.component":
            props = data.get("props")
            shown = Shown(
                turn,
                data.get("id"),
                str(data["component"]),
                props if isinstance(props, dict) else {},
                data.get("call_id"),
            )
            if shown.component_id is not None:
                self._shown[shown.component_id] = shown
            return self._append(shown)
        found = self._shown.get(str(data.get("component_id")))
        if found is None:
            return None  # shown before the events folded
        if kind == "ui.asked":
            found.waiting = True
            found.expires_at = data.get("expires_at")
        elif kind == "ui.chosen":
            found.waiting = False
            found.choice = data.get("choice")
            found.chosen_by = str(data["by"])
            if found.choice is None:
                found.closed = str(data.get("reason") or "closed")
        return found

    def _spawned(self, turn: int | None, data: dict[str, Any]) -> Block:
        child = str(data["child_run_id"])
        call = self._calls.get(str(data.get("call_id")))
        if call is not None:
            call.child_run_id = child
        text = f"delegated to {child}: {data['objective']}"
        return self._append(Note("spawned", text, "info", turn, run_id=child))

    def _note(self, kind: str, data: dict[str, Any]) -> Note | None:
        if kind == "mcp.sampled":  # the run's model answered a source: it counts in the run's
            usage = data["usage"]
            self.input_tokens += int(usage["input_tokens"])
            self.output_tokens += int(usage["output_tokens"])
            self.cost_usd += float(data.get("cost_usd") or 0.0)
        if kind == "run.created":
            self.objective = str(data["objective"])
            self.model = str(data["model"])
            self.world = str(data["world"])
            budget = data.get("budget") or {}
            self.budget_usd = budget.get("usd")
            self.auto_approve = bool((data.get("settings") or {}).get("auto_approve", False))
            return Note("created", self.objective, "info")
        if kind == "run.forked":
            parent = data["parent"]
            if data.get("model"):
                self.model = str(data["model"])
            if data.get("world"):
                self.world = str(data["world"])
            text = f"forked from {parent['run_id']} at turn {data['turn']}"
            if data.get("message"):
                text += f": {data['message']}"
            return Note("forked", text, "info", run_id=str(parent["run_id"]))
        fold = NOTES.get(kind)
        return None if fold is None else fold(data)


def answered(question: dict[str, Any], data: dict[str, Any]) -> str:
    """A source's question and how it was answered, on one line (the message as text)."""
    asked = f"{question['source']} asked {' '.join(str(question['message']).split())!r}"
    if question.get("name") == "sampling":
        asked = f"{question['source']} asked to have the run's model answer a prompt"
    if data["decision"] == "allow":
        fields = ", ".join(f"{k}={v!r}" for k, v in (data.get("answer") or {}).items())
        return f"{asked}: answered by {data['by']}" + (f": {fields}" if fields else "")
    if data.get("auto") and data.get("reason"):
        return f"{asked}: {data['reason']}"
    return f"{asked}: declined by {data['by']}"
