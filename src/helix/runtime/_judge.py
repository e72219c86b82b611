"""Judging a tree of thoughts' branches: a command in the branch's world, or a judge run.

A command runs through the strategy run's sandbox, in the branch's world, with no
network: exit 0 scores 1.0 (or, with ``score: output``, the last number it printed).
A judge run is an agent run in the branch's world (reading tools by default), whose
final reply ends with the score. Its id is logged (``strategy.branched``) before it is
created, so a judge that was running when the process died is found again, not
started twice.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING

from helix.errors import HelixError, RunNotFoundError, RunStateError
from helix.kernel.events import TERMINAL_EVENTS, Budget
from helix.kernel.session import BranchProgress, SessionState, replay_run

from ._setup import RunSetup
from ._strategies import CommandJudge, RunJudge, TreeOfThoughts

if TYPE_CHECKING:
    from ._engine import Engine

JUDGE_SYSTEM = (
    "You judge another agent's work on a task. Look at the files in your world (the"
    " work's result) as you need, then reply with a short reason and end your reply"
    " with the score: a number from 0 (useless) to 1 (the task is fully done)."
)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TAIL = 2000
"""How much of a command's output (its end) a ``strategy.scored`` keeps."""


def last_number(text: str) -> float | None:
    """The last number in ``text``, or ``None``."""
    found = _NUMBER.findall(text)
    return float(found[-1]) if found else None


async def settle(engine: Engine, run_id: str, after: int = -1) -> SessionState:
    """Drive the run here (or wait for whoever drives it) until it ends or pauses.

    A paused run (at its budget, or by a person) waits for a person: the strategy does
    not. ``after``: where the run's own log starts (a fork's point), for the watch.
    """
    store = engine.store
    async with asyncio.TaskGroup() as group:
        driver = group.create_task(_drive_or_await(engine, run_id, after))
        async with store.subscribe(run_id, after=after) as events:
            async for event in events:
                if event.type in TERMINAL_EVENTS:
                    break
                paused = event.type == "run.paused"
                if paused and (await replay_run(store, run_id)).status == "paused":
                    driver.cancel()
                    break
    return await replay_run(store, run_id)


async def _drive_or_await(engine: Engine, run_id: str, after: int) -> None:
    try:
        await engine.drive(run_id)
        return
    except RunStateError:  # another process drives it: its end is awaited instead
        pass
    async with engine.store.subscribe(run_id, after=after) as events:
        async for event in events:
            if event.type in TERMINAL_EVENTS:
                return


async def judge(
    engine: Engine, setup: RunSetup, strategy: TreeOfThoughts, branch: BranchProgress
) -> tuple[float | None, str]:
    """Score a completed branch: (score, why). Errors of the judge are a ``None`` score."""
    world = Path((await engine.store.get_run(branch.run_id)).world)
    try:
        if isinstance(strategy.judge, CommandJudge):
            return await _by_command(setup, strategy.judge, world)
        return await _by_run(engine, setup, strategy.judge, branch, world)
    except HelixError as error:
        return None, f"the judge could not run: {error}"


async def _by_command(
    setup: RunSetup, judge: CommandJudge, world: Path
) -> tuple[float | None, str]:
    timeout = judge.timeout_s or setup.blueprint.sandbox.command_timeout_s
    result = await setup.sandbox.run(
        judge.command,
        cwd=world,
        timeout_s=timeout,
        tmp_bytes=setup.blueprint.sandbox.tmp_mb * 2**20,
    )
    output = result.output[-_TAIL:]
    if result.timed_out or result.exit_code is None:
        return 0.0, f"timed out after {timeout:g} s\n{output}"
    said = f"exit {result.exit_code}\n{output}"
    if result.exit_code != 0:
        return 0.0, said
    if judge.score == "exit":
        return 1.0, said
    number = last_number(result.output)
    return (0.0, f"{said}\n(no number in its output)") if number is None else (number, said)


async def _by_run(
    engine: Engine, setup: RunSetup, judge: RunJudge, branch: BranchProgress, world: Path
) -> tuple[float | None, str]:
    judge_id = branch.judge_run_id
    if judge_id is None:  # a log written with a command judge, read with a run judge
        return None, "no judge run was logged for this branch"
    try:
        record = await engine.store.get_run(judge_id)
    except RunNotFoundError:
        record = None
    if record is None:
        done = await replay_run(engine.store, branch.run_id)
        objective = (
            f"{judge.objective}\n\nThe task was: {done.objective}\n\nThe agent's summary"
            f" of its work: {done.summary or '(none)'}\n\nIts result is in your world."
        )
        own = setup.blueprint
        blueprint = own.model_copy(
            update={
                "strategy": None,
                "system": JUDGE_SYSTEM,
                "model": judge.model or own.roles.get("judge") or own.model,
                "tools": judge.tools if judge.tools is not None else _readers(setup),
                "budget": Budget(usd=judge.budget_usd),
                "mcp": (),
                "plugins": (),
                "tool_choice": "auto",  # the branch's forced choice is not the judge's
            }
        )
        await engine.create(
            objective,
            blueprint=blueprint,
            world=world,
            auto_approve=setup.auto_approve,
            attended=False,
            workspace=setup.workspace,
            run_id=judge_id,
            depth=setup.depth + 1,
            role="judge",
        )
    elif Path(record.world) != world or record.workspace != setup.workspace:
        return None, f"the log names {judge_id} as this branch's judge, but it is another run's"
    final = await settle(engine, judge_id)
    reply = final.summary or final.error or ""
    if final.status != "completed":
        return None, f"the judge run {judge_id} ended {final.status}: {reply}"[-_TAIL:]
    return last_number(reply), reply[-_TAIL:]


def _readers(setup: RunSetup) -> tuple[str, ...]:
    """The run's tools that only read (by their facets): a judge's default."""
    return tuple(tool.name for tool in setup.tools if tool.read_only)
