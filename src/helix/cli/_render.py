"""Human-readable views of events, runs and session states."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from helix.kernel.events import Event
from helix.kernel.session import SessionState

if TYPE_CHECKING:
    from helix.api import ProcessList, Run, RunEvent


def _clip(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


_SUMMARIES: dict[str, str] = {
    "run.created": "{objective!r} with {model}",
    "run.forked": "from {parent[run_id]} at seq {parent[seq]} (turn {turn})",
    "run.completed": "{summary}",
    "run.failed": "{error}",
    "run.cancelled": "by {by}",
    "turn.started": "turn {turn}",
    "turn.ended": "turn {turn}",
    "gate.decided": "{gate}: {verdict} ({reason})",
    "approval.requested": "{name} {args} (request {request_id})",
    "approval.decided": "{decision} by {by}",
    "tool.started": "{call_id} in {sandbox}",
    "tool.interrupted": "{call_id}: {reason}",
    "file.changed": "{op} {path}",
    "steer.received": "{message}",
    "agent.spawned": "{child_run_id}: {objective}",
    "agent.reported": "{child_run_id}: {report}",
    "task.started": "{task} attempt {attempt}: {run_id}",
    "task.completed": "{task}: {run_id} (${cost_usd})",
    "task.failed": "{task} attempt {attempt}: {error}",
    "task.retried": "{task} by {by}",
    "ui.component": "{component}",
    "plugin.loaded": "{name} {version} ({source})",
    "plugin.reloaded": "{name} {previous} → {version}: {reason}",
    "plugin.failed": "{name}: {error}",
    "supervisor.restarted": "{component} (attempt {attempt}): {reason}",
    "lease.taken_over": "{holder} (epoch {epoch}) after {previous_holder}: {reason}",
    "world.file_skipped": "{path}: {reason} ({size} bytes)",
    "world.rolled_back": "to turn {to_turn} by {by}",
    "world.kept": "{branch} into {target}",
    "world.process_started": "{process}: {command}",
    "world.process_ended": "{process} {reason} (exit code {exit_code})",
    "world.restored": "{tier} image {image:.12} in {seconds}s",
    "strategy.branched": "at turn {turn}, judged by {judge}",
    "strategy.scored": "{branch} {status}: score {score}",
    "strategy.chosen": "{branch}: {reason}",
    "effect.recorded": "{tool} {kind}: {summary}",
    "effect.settled": "{call_id} {outcome}: {detail}",
    "mcp.server.started": "{server} ({transport}) answered",
    "mcp.server.stopped": "{server}",
    "mcp.server.failed": "{server}: {reason}",
    "mcp.egress.decided": "{server} {verdict} {host}:{port}",
    "mcp.sampled": "{source}: {model} answered {text!r} (${cost_usd})",
    "mcp.sample_refused": "{source}: {reason}",
    "memory.remembered": "{id} ({scope} of {owner})",
    "memory.artifact_saved": "{name} v{version} ({scope} of {owner}, {size} bytes)",
    "memory.artifact_opened": "{name} v{version} ({scope} of {owner})",
}


NO_DETAIL = "no detail given"
"""What a failure's line says when its event carries an empty reason."""


def summarize(event: Event | RunEvent) -> str:
    """Say in one line what an event means (a failure always with its reason)."""
    data: dict[str, Any] = event.data
    if event.type.endswith(".failed"):  # an empty reason still says so
        data = {k: (v or NO_DETAIL) if k in ("error", "reason") else v for k, v in data.items()}
    model = _model_summary(event.type, data)
    if model is not None:
        return model
    graph = _graph_summary(event.type, data) or _budget_summary(event.type, data)
    if graph is not None:
        return graph
    special = _SPECIAL.get(event.type)
    if special is not None:
        return special(data)
    if event.type == "approval.requested" and data.get("question"):
        asked = data["question"]
        message = _clip(str(asked["message"]), 60)
        return f"{asked['source']} asks {message!r} (request {data['request_id']})"
    if event.type == "approval.decided" and data.get("answer"):
        return _clip(f"answered by {data['by']}: {data['answer']}")
    if event.type == "egress.counted":
        hosts = [f"{h['host']} {h['verdict']} ({h['attempts']} tries)" for h in data["hosts"]]
        others = data.get("other_attempts") or 0
        return _clip(", ".join(hosts) + (f"; {others} more to other hosts" if others else ""), 100)
    if event.type == "mcp.tools.changed":
        changes = [f"+{n}" for n in data["added"]] + [f"-{n}" for n in data["removed"]]
        return _clip(f"{data['server']}: {' '.join(changes)}")
    if event.type in ("world.rolled_back", "world.kept") and data.get("conflicts"):
        base = _clip(_SUMMARIES[event.type].format(**data), 40)
        return f"{base}; {len(data['conflicts'])} left as they were (conflicts)"
    template = _SUMMARIES.get(event.type)
    if template is None:
        return ""
    try:
        return _clip(template.format(**data), 110 if event.type.endswith(".failed") else 70)
    except (KeyError, IndexError):
        return ""


def _processes(data: dict[str, Any]) -> str:
    return ", ".join(data.get("processes") or ()) or "no process"


def _checkpointed(data: dict[str, Any]) -> str:
    """A live world frozen: what it holds, its size, how long it took."""
    size = f"{data['size_bytes'] / (1 << 20):.1f} MiB"
    took = f"{data['seconds']}s, {data['reason']}"
    return f"{data['tier']}: {_processes(data)} frozen in {size} ({took})"


def _stopped(data: dict[str, Any]) -> str:
    """A live world stopped: why, and what it killed."""
    detail = f": {_clip(data['detail'], 60)}" if data.get("detail") else ""
    return f"{data['tier']} {data['reason']}{detail}; killed {_processes(data)}"


def _tool_completed(data: dict[str, Any]) -> str:
    """A call's result: a failed one with its reason (its output), never cut short."""
    where = f" on node {str(data['node'])[:12]}" if data.get("node") else ""
    if data["ok"]:
        return f"{data['call_id']} ok{where}: {_clip(data['output'], 50)!r}"
    said = _clip(data["output"], 110) or "no output"
    return f"{data['call_id']} error{where}: {said!r}"


def _budget_summary(kind: str, data: dict[str, Any]) -> str | None:
    """Which budget a ``budget.exceeded`` names, and how much of which cap."""
    if kind != "budget.exceeded":
        return None
    if data.get("scope") is None:
        return f"spent ${data['spent_usd']} of ${data['cap_usd']}"
    from ._run_notes import budget_words

    return budget_words(data)


def _model_summary(kind: str, data: dict[str, Any]) -> str | None:
    """A model call's events: the role it served, then the model (docs/models.md#roles)."""
    if kind == "model.requested":
        return f"{data.get('role') or 'main'}: {data['provider']}:{data['model']}"
    if kind == "model.responded":
        calls = ", ".join(c["name"] for c in data["tool_calls"]) or "no tools"
        by = f" (by {data['provider']}:{data['model']})" if data.get("provider") else ""
        return f"{data.get('role') or 'main'}{by}: {_clip(data['text'], 40)!r} → {calls}"
    if kind == "model.failed":
        retry = data.get("retry_in_s")
        then = "no retry" if retry is None else f"retry in {retry:.1f}s"
        return f"{_clip(str(data['error']), 110)} (attempt {data['attempt']}, {then})"
    if kind == "model.rejected":
        from ._run_notes import rejected_words

        return _clip(rejected_words(data), 160)
    if kind == "context.compacted":
        by = f"{data['role']}: {data['provider']}:{data['model']}"
        return f"turns 1-{data['upto_turn']} summarised ({by}): {_clip(data['summary'], 40)!r}"
    return None


def _paused(data: dict[str, Any]) -> str:
    detail = data.get("detail")
    return _clip(f"{data['reason']}: {detail}" if detail else str(data["reason"]), 160)


def _requested(data: dict[str, Any]) -> str:
    """A call and its arguments; a malformed one's text as the model sent it."""
    raw = data.get("raw_args")
    if raw is None:
        return _clip(f"{data['name']} {data['args']}")
    return _clip(f"{data['name']} {raw} (malformed: {data.get('malformed')})", 160)


def _recalled(data: dict[str, Any]) -> str:
    found = len(data["ids"])
    return _clip(f"{data['query']!r} in {'+'.join(data['scopes'])}: {found} found")


def _graph_summary(kind: str, data: dict[str, Any]) -> str | None:
    """A task graph's own events: it has no model of its own, and a plan of tasks."""
    if kind == "run.created" and not data.get("model"):  # a graph: its tasks have models
        return _clip(repr(data["objective"]))
    if kind == "graph.planned":
        return f"{len(data['plan'].get('tasks') or ())} tasks"
    return None


def event_line(event: Event | RunEvent) -> str:
    """Format a log line: seq, turn, actor, type and what it means."""
    turn = "-" if event.turn is None else str(event.turn)
    return f"{event.seq:>6}  t{turn:<3} {event.actor:<10} {event.type:<18} {summarize(event)}"


def blueprint_text(record: Run) -> str:
    """``reviewer v3`` (a stored blueprint's version), ``reviewer``, or ``-`` (none)."""
    if record.blueprint is None:
        return "-"
    version = record.blueprint_version
    return record.blueprint if version is None else f"{record.blueprint} v{version}"


def run_lines(record: Run) -> list[str]:
    """Format the fields of a run, one per line (full ids; times with how long ago)."""
    from ._listing import ago, status_text

    scripted = "  (scripted)" if record.model.startswith("scripted:") else ""
    parent = "-"
    if record.parent is not None:
        at = "" if record.parent.turn is None else f"turn {record.parent.turn}, "
        parent = f"{record.parent.run_id} @ {at}seq {record.parent.seq}"
    return [
        f"run        {record.id}",
        f"status     {status_text(record)}",
        f"objective  {record.objective}",
        f"model      {record.model}{scripted}",
        f"blueprint  {blueprint_text(record)}",
        f"world      {record.world}",
        f"parent     {parent}",
        f"turns      {record.turns}",
        f"tokens     {record.input_tokens} in / {record.output_tokens} out",
        f"cost       ${record.cost_usd:.4f}",
        f"events     {record.events}",
        f"created    {record.created_at}  ({ago(record.created_at)})",
        f"updated    {record.updated_at}  ({ago(record.updated_at)})",
    ]


def state_dict(state: SessionState) -> dict[str, Any]:
    """Return the replayed state as JSON-ready data."""
    return {
        "run_id": state.run_id,
        "head": state.head,
        "status": state.status,
        "turn": state.turn,
        "at_turn_boundary": state.at_turn_boundary,
        "messages": len(state.messages),
        "pending_calls": sorted(state.pending_calls),
        "interrupted_calls": sorted(state.interrupted_calls),
        "pending_approvals": sorted(state.pending_approvals),
        "input_tokens": state.usage.input_tokens,
        "output_tokens": state.usage.output_tokens,
        "cost_usd": round(state.usage.cost_usd, 6),
        "summary": state.summary,
        "error": state.error,
    }


def _world_summary(data: dict[str, Any]) -> str:
    """``3 changed, 1 removed (120 files, 2,048 bytes new)``; the whole world for a base."""
    files, added = data.get("files", 0), data.get("bytes_added", 0)
    if data.get("base"):
        return f"the whole world: {files} paths ({added:,} bytes new)"
    changes = data.get("changes") or {}
    removed = sum(1 for entry in changes.values() if entry is None)
    parts = [f"{len(changes) - removed} changed"] + ([f"{removed} removed"] if removed else [])
    return f"{', '.join(parts)} ({files} paths, {added:,} bytes new)"


def record_dict(record: Run) -> dict[str, object]:
    """A run as ``helix runs --json`` and ``helix show --json`` print it."""
    parent = None if record.parent is None else record.parent.model_dump()
    return {
        "id": record.id,
        "status": record.status,
        "objective": record.objective,
        "model": record.model,
        "blueprint": record.blueprint,
        "blueprint_version": record.blueprint_version,
        "parent": parent,
        "workspace": record.workspace,
        "turns": record.turns,
        "cost_usd": record.cost_usd,
        "input_tokens": record.input_tokens,
        "output_tokens": record.output_tokens,
        "events": record.events,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "driven": record.driven,
    }


_SPECIAL: dict[str, Callable[[dict[str, Any]], str]] = {
    "run.paused": _paused,
    "tool.requested": _requested,
    "world.snapshotted": _world_summary,
    "memory.recalled": _recalled,
    "tool.completed": _tool_completed,
    "world.checkpointed": _checkpointed,
    "world.stopped": _stopped,
}
"""Events said by a function of their data rather than a template."""


def process_lines(live: ProcessList) -> list[str]:
    """The background processes of a run's live world, one per line, under ``processes``."""
    lines = []
    for index, process in enumerate(live.processes):
        if process.running:
            state = "frozen " if live.image else "running"
        elif process.ended == "world_stopped":
            state = "killed "
        else:
            state = f"exit {process.exit_code}" if process.exit_code is not None else "ended  "
        turn = f"  (turn {process.turn})" if process.turn is not None else ""
        label = "processes  " if index == 0 else "           "
        command = process.command if len(process.command) <= 60 else process.command[:59] + "…"
        lines.append(f"{label}{process.process:<4} {state:<8} {command}{turn}")
    if live.image:
        lines.append(f"world      checkpointed ({live.tier}, image {live.image[:12]}…)")
    return lines
