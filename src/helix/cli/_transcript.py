"""A run's events folded into what a person reads: messages, tool calls, run notes.

Pure data (no terminal, no widgets): the terminal view (``helix run``, ``helix replay``)
and the TUI both fold ``RunEvent`` s through a ``Transcript`` and draw its blocks.

- ``Said``: the agent's message (in full), a person's steer, or a system line.
- ``Call``: one tool call, from its request through every gate, its approval, its run,
  its result and the files it changed.
- ``Note``: something that happened to the run (created, paused, failed, …).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from helix.kernel.events import STATUS_AFTER

if TYPE_CHECKING:
    from helix.api import RunEvent

Who = Literal["agent", "person", "system"]
Verdict = Literal["allow", "ask", "deny"]
CallState = Literal["requested", "waiting", "running", "ok", "error", "denied", "interrupted"]
Tone = Literal["info", "good", "warn", "bad"]

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

    @property
    def done(self) -> bool:
        """Whether the call has its end: a result, a denial or an interruption."""
        return self.state in ("ok", "error", "denied", "interrupted")


@dataclass
class Note:
    """Something that happened to the run: created, forked, paused, failed, a restart."""

    kind: str
    text: str
    tone: Tone
    turn: int | None = None
    run_id: str | None = None
    """The other run it names: a child spawned, a fork's parent."""


Block = Said | Call | Note


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
        usage = data.get("usage") or {}
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.cost_usd += float(data.get("cost_usd") or 0.0)
        text = str(data.get("text") or "")
        return self._append(Said(turn, "agent", text)) if text.strip() else None

    def _call_event(self, kind: str, turn: int | None, data: dict[str, Any]) -> Block | None:
        if kind == "tool.requested":
            args = dict(data["args"])
            call = Call(str(data["call_id"]), turn, str(data["name"]), args, summarize_args(args))
            self._calls[call.call_id] = call
            return self._append(call)
        if kind == "approval.decided":
            found = self._requests.get(str(data["request_id"]))
            if found is not None:
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

    def _spawned(self, turn: int | None, data: dict[str, Any]) -> Block:
        child = str(data["child_run_id"])
        call = self._calls.get(str(data.get("call_id")))
        if call is not None:
            call.child_run_id = child
        text = f"delegated to {child}: {data['objective']}"
        return self._append(Note("spawned", text, "info", turn, run_id=child))

    def _note(self, kind: str, data: dict[str, Any]) -> Note | None:
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
        fold = _NOTES.get(kind)
        return None if fold is None else fold(data)


def _resumed(data: dict[str, Any]) -> Note:
    by = data.get("by")
    return Note("resumed", f"resumed by {by}" if by else "resumed after a restart", "info")


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


_LOST = {"expired": "its driver stopped renewing", "holder_gone": "its driver's process ended"}
"""Why a run's driver was replaced (``lease.taken_over``'s ``reason``), as said to a person."""

_NOTES: dict[str, Callable[[dict[str, Any]], Note]] = {
    "run.resumed": _resumed,
    "run.paused": lambda d: Note("paused", f"paused ({d['reason']})", "warn"),
    "run.completed": lambda d: Note("completed", str(d["summary"]), "good"),
    "run.failed": lambda d: Note("failed", str(d["error"]), "bad"),
    "run.cancelled": lambda d: Note("cancelled", f"cancelled by {d['by']}", "bad"),
    "budget.exceeded": lambda d: Note(
        "budget", f"budget reached: ${d['spent_usd']:.4f} spent of ${d['cap_usd']:.4f}", "warn"
    ),
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
    "ui.component": lambda d: Note("ui", f"showed {d['component']}", "info"),
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
}
"""How each run-level event reads, by type; types not here make no block."""
