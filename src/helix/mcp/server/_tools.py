"""The tools ``helix mcp serve`` offers: each a name, a schema, honest hints, a handler.

Every handler is one call (or a bounded read) through ``helix.api``, so a tool does
exactly what the same command does from a terminal, the SDK or the REST API, against
the local store or a server alike. The names are stable (docs/mcp-server.md).

What an MCP client may do is the person's choice, made when they start the server
(``McpServePolicy``): by default it cannot answer approvals (``approve``/``deny`` are
not offered) and cannot start a run that approves itself (``auto_approve``), so an agent
supervising Helix can never wave its own risky calls through the gates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from helix.api import Decision, HelixApi

from ._args import (
    ChooseArgs,
    DecideArgs,
    DiffArgs,
    FilesArgs,
    ForkArgs,
    ListRunsArgs,
    ReadFileArgs,
    ResumeArgs,
    RollbackArgs,
    RunArgs,
    RunEventsArgs,
    StartRunArgs,
    SteerArgs,
)
from ._reads import diff_text, events_page, file_content


@dataclass(frozen=True)
class McpServePolicy:
    """What the person starting ``helix mcp serve`` lets its MCP clients do.

    Args:
        allow_approvals: Offer ``approve`` and ``deny``: a client may answer the
            approvals runs ask for (``--allow-approvals``). Off: the person answers them
            (``helix approve``, the dashboard, a phone link); clients can only list them.
        allow_auto_approve: Let ``start_run`` take ``auto_approve: true``, a run whose
            asks are all allowed (``--allow-auto-approve``).
    """

    allow_approvals: bool = False
    allow_auto_approve: bool = False


class ToolRefused(Exception):
    """A call the policy or the arguments refuse; it becomes an error result."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def approvals_refused() -> ToolRefused:
    """What ``approve``/``deny`` answer when the person has not allowed approvals via MCP."""
    return ToolRefused(
        "not_allowed",
        "approvals through MCP are off: the person answers them (helix approve, the"
        " dashboard), unless they start `helix mcp serve --allow-approvals`",
    )


Handler = Callable[[HelixApi, Any, McpServePolicy], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class HelixTool:
    """One tool: its name, what it does, its arguments, its hints, and its handler."""

    name: str
    title: str
    description: str
    args: type[BaseModel]
    handler: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    approvals: bool = False
    """Offered only when the policy allows approvals through MCP."""


def _run(run: BaseModel) -> dict[str, Any]:
    return {"run": run.model_dump(mode="json")}


async def _start_run(api: HelixApi, a: StartRunArgs, policy: McpServePolicy) -> dict[str, Any]:
    if a.auto_approve and not policy.allow_auto_approve:
        raise ToolRefused(
            "not_allowed",
            "auto_approve is off for MCP clients: the person who started `helix mcp serve`"
            " did not pass --allow-auto-approve; the run's asks wait for a person instead",
        )
    run = await api.create(
        a.objective, model=a.model, blueprint=a.blueprint, world=a.folder,
        workspace=a.workspace, budget_usd=a.budget_usd, auto_approve=a.auto_approve,
    )  # fmt: skip
    return _run(run)


async def _list_runs(api: HelixApi, a: ListRunsArgs, _: McpServePolicy) -> dict[str, Any]:
    page = await api.runs(status=a.status, workspace=a.workspace, limit=a.limit, cursor=a.cursor)
    return page.model_dump(mode="json")


async def _get_run(api: HelixApi, a: RunArgs, _: McpServePolicy) -> dict[str, Any]:
    return _run(await api.get(a.run_id))


async def _run_events(api: HelixApi, a: RunEventsArgs, _: McpServePolicy) -> dict[str, Any]:
    return await events_page(api, a.run_id, after=a.after, limit=a.limit, wait_s=a.wait_s)


async def _approvals(api: HelixApi, a: RunArgs, policy: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    pending = await api.approvals(run.id)
    return {
        "run_id": run.id,
        "approvals": [p.model_dump(mode="json") for p in pending],
        "answerable_here": policy.allow_approvals,
    }


def _decider(decision: Decision) -> Handler:
    async def decide(api: HelixApi, a: DecideArgs, policy: McpServePolicy) -> dict[str, Any]:
        if not policy.allow_approvals:
            raise approvals_refused()
        run = await api.get(a.run_id)
        reason = "[mcp]" if not a.reason else f"[mcp] {a.reason}"
        decided = await api.decide(run.id, a.request_id, decision, reason=reason)
        return {"run_id": run.id, **decided.model_dump(mode="json")}

    return decide


async def _choices(api: HelixApi, a: RunArgs, policy: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    cards = await api.choices(run.id)
    return {
        "run_id": run.id,
        "choices": [c.model_dump(mode="json") for c in cards],
        "answerable_here": policy.allow_approvals,
    }


async def _choose(api: HelixApi, a: ChooseArgs, policy: McpServePolicy) -> dict[str, Any]:
    if not policy.allow_approvals:  # a choice is a person's decision, as an approval is
        raise approvals_refused()
    run = await api.get(a.run_id)
    made = await api.choose(run.id, a.component_id, a.choice)
    return {"run_id": run.id, **made.model_dump(mode="json")}


async def _steer(api: HelixApi, a: SteerArgs, _: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    await api.steer(run.id, a.message)
    return {"run_id": run.id, "steered": True}


async def _pause(api: HelixApi, a: RunArgs, _: McpServePolicy) -> dict[str, Any]:
    return _run(await api.pause(a.run_id))


async def _resume(api: HelixApi, a: ResumeArgs, _: McpServePolicy) -> dict[str, Any]:
    resumed = await api.resume(
        a.run_id, budget_usd=a.budget_usd, max_turns=a.max_turns, max_seconds=a.max_seconds
    )
    return _run(resumed)


async def _cancel(api: HelixApi, a: RunArgs, _: McpServePolicy) -> dict[str, Any]:
    return _run(await api.cancel(a.run_id))


async def _fork(api: HelixApi, a: ForkArgs, _: McpServePolicy) -> dict[str, Any]:
    return _run(await api.fork(a.run_id, turn=a.turn, message=a.message, model=a.model))


async def _rollback(api: HelixApi, a: RollbackArgs, _: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    done = await api.rollback(run.id, to=a.to)
    return {"run_id": run.id, "rollback": done.model_dump(mode="json")}


async def _files(api: HelixApi, a: FilesArgs, _: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    listing = await api.files(run.id, a.path, turn=a.turn)
    return {"run_id": run.id, "files": [f.model_dump(mode="json") for f in listing]}


async def _read_file(api: HelixApi, a: ReadFileArgs, _: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    content = await file_content(api, run.id, a.path, turn=a.turn, max_bytes=a.max_bytes)
    return {"run_id": run.id, **content}


async def _diff(api: HelixApi, a: DiffArgs, _: McpServePolicy) -> dict[str, Any]:
    run = await api.get(a.run_id)
    return {"run_id": run.id, **await diff_text(api, run.id, start=a.start, end=a.end, path=a.path)}


TOOLS: tuple[HelixTool, ...] = (
    HelixTool(
        "start_run", "Start a run",
        "Start a supervised agent run on an objective; it is driven in the background."
        " Every consequential call passes Helix's gates; a call they ask about waits for"
        " a person's approval (see pending_approvals). Answers the new run.",
        StartRunArgs, _start_run,
    ),
    HelixTool(
        "list_runs", "List runs", "A page of runs, newest first, with their status and cost.",
        ListRunsArgs, _list_runs, read_only=True, idempotent=True,
    ),
    HelixTool(
        "get_run", "Run status",
        "One run: status, model, turns, tokens, cost, and whether something drives it.",
        RunArgs, _get_run, read_only=True, idempotent=True,
    ),
    HelixTool(
        "run_events", "Read a run's events",
        "The run's events after a seq, in order, a page at a time (its log is the session)."
        " With wait_s, waits for the next event when there is none yet.",
        RunEventsArgs, _run_events, read_only=True, idempotent=True,
    ),
    HelixTool(
        "pending_approvals", "Pending approvals",
        "The calls the run waits on a person to allow or deny, with their arguments.",
        RunArgs, _approvals, read_only=True, idempotent=True,
    ),
    HelixTool(
        "approve", "Approve a call",
        "Allow a call the run waits on (the only pending one if request_id is left out);"
        " logged as the person's decision, marked [mcp]. Only offered with --allow-approvals.",
        DecideArgs, _decider("allow"), destructive=True, approvals=True,
    ),
    HelixTool(
        "deny", "Deny a call",
        "Refuse a call the run waits on; the model is told (with the reason) and adapts."
        " Only offered with --allow-approvals.",
        DecideArgs, _decider("deny"), approvals=True,
    ),
    HelixTool(
        "pending_choices", "Pending choices",
        "The options cards the run waits on a person to choose from (ask_choice), with"
        " their question and options.",
        RunArgs, _choices, read_only=True, idempotent=True,
    ),
    HelixTool(
        "choose", "Choose an option",
        "Answer an options card the run waits on (the only one if component_id is left"
        " out); logged as the person's choice. Only offered with --allow-approvals.",
        ChooseArgs, _choose, approvals=True,
    ),
    HelixTool(
        "steer_run", "Steer a run",
        "Tell the agent something; it reads it before its next model call.",
        SteerArgs, _steer,
    ),
    HelixTool(
        "pause_run", "Pause a run",
        "Pause at the next safe point (a running tool finishes first); resume_run goes on.",
        RunArgs, _pause, idempotent=True,
    ),
    HelixTool(
        "resume_run", "Resume a run",
        "Resume a paused or interrupted run (with a new budget, if given) and drive it.",
        ResumeArgs, _resume,
    ),
    HelixTool(
        "cancel_run", "Cancel a run",
        "Cancel the run: a running command is killed and the run ends cancelled.",
        RunArgs, _cancel, destructive=True, idempotent=True,
    ),
    HelixTool(
        "fork_run", "Fork a run",
        "Fork the run where a turn ended, with its own copy of the world there; the fork"
        " is driven too. Answers the fork.",
        ForkArgs, _fork,
    ),
    HelixTool(
        "rollback_run", "Roll a run's world back",
        "Restore the run's world folder to its start or a turn's end (refused while the run"
        " runs); the log keeps a marker.",
        RollbackArgs, _rollback, destructive=True,
    ),
    HelixTool(
        "list_files", "List a run's files",
        "The paths of the run's world (or under one path), now or as they were at a turn.",
        FilesArgs, _files, read_only=True, idempotent=True,
    ),
    HelixTool(
        "read_file", "Read a run's file",
        "A file of the run's world, now or at a turn: text if it is UTF-8, else base64.",
        ReadFileArgs, _read_file, read_only=True, idempotent=True,
    ),
    HelixTool(
        "diff_run", "Diff a run's world",
        "A unified diff of the run's world between two points (whole, or one path).",
        DiffArgs, _diff, read_only=True, idempotent=True,
    ),
)  # fmt: skip


def offered(policy: McpServePolicy) -> tuple[HelixTool, ...]:
    """The tools this policy offers (``approve``/``deny`` only if it allows approvals)."""
    return tuple(t for t in TOOLS if policy.allow_approvals or not t.approvals)


TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
