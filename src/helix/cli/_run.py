"""``helix run``, ``helix resume``: runs driven in the foreground, shown live."""

from __future__ import annotations

import subprocess
import sys
from typing import Annotated

import typer

from helix.errors import BlueprintError, RunStateError
from helix.kernel.events import Budget
from helix.kernel.log import EventStore

from ._client import remotely
from ._common import print_json_line, run, with_store
from ._control import who
from ._live import drive_and_show, engine_for, exit_code, resolve_dir
from ._remote import connected


def run_command(
    objective: Annotated[
        str, typer.Argument(metavar="OBJECTIVE", help="What the agent should do.")
    ],
    model: Annotated[
        str | None, typer.Option(help="provider:model (overrides the blueprint).")
    ] = None,
    blueprint: Annotated[str | None, typer.Option(help="A blueprint file (YAML or TOML).")] = None,
    dir: Annotated[
        str | None, typer.Option("--dir", help="The run's world (default: here).")
    ] = None,
    budget: Annotated[float | None, typer.Option(min=0, help="A USD cap for the run.")] = None,
    auto_approve: Annotated[
        bool, typer.Option(help="Turn every ask into allow (never a deny).")
    ] = False,
    detach: Annotated[bool, typer.Option(help="Start it in the background; print its id.")] = False,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Run an agent on OBJECTIVE, in the foreground, shown live."""
    from helix.runtime import Blueprint

    if (remote := connected()) is not None:
        raise typer.Exit(
            remotely(
                lambda: remote.start(
                    objective, model, blueprint, dir, budget, auto_approve, detach, json
                )
            )
        )

    async def main(store: EventStore) -> int:
        engine = engine_for(store)
        loaded = Blueprint.load(blueprint) if blueprint else None
        try:
            record = await engine.create(
                objective,
                blueprint=loaded,
                model=model,
                world=resolve_dir(dir),
                budget_usd=budget,
                auto_approve=auto_approve,
                attended=not detach or auto_approve,
            )
        except BlueprintError as error:  # a name the file gives (tool, model): say which file
            raise BlueprintError(f"{blueprint}: {error}" if blueprint else str(error)) from None
        if detach:
            _detach(record.id)
            if json:
                print_json_line({"id": record.id, "status": record.status})
            else:
                typer.echo(record.id)
            return 0
        state = await drive_and_show(engine, record.id, json=json)
        return exit_code(state)

    raise typer.Exit(run(lambda: with_store(main)))


def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    budget: Annotated[float | None, typer.Option(min=0, help="Raise the USD cap to this.")] = None,
    json: Annotated[bool, typer.Option("--json", help="Print events as JSON Lines.")] = False,
) -> None:
    """Resume a paused or interrupted run; drive it here unless another process does."""
    from helix.runtime import resume as resume_run

    if (remote := connected()) is not None:
        raise typer.Exit(remotely(lambda: remote.resume(run_id, budget, json)))

    async def main(store: EventStore) -> int:
        from helix.kernel.session import replay_run

        engine = engine_for(store)
        state_before = await store.get_run(run_id)
        folded = await replay_run(store, run_id)
        new_budget = None
        if budget is not None:
            new_budget = (folded.budget or Budget()).model_copy(update={"usd": budget})
        elif folded.status == "paused" and folded.pause_reason == "budget":
            cap = folded.budget.usd if folded.budget else None
            raise RunStateError(
                f"run {run_id!r} is paused at its budget cap (spent"
                f" ${folded.spent_usd:.4f} of ${cap}): resume it with --budget USD"
            )
        if state_before.status == "paused" or new_budget is not None:
            await resume_run(store, run_id, by=who(), budget=new_budget)
        if engine.is_driven(run_id):
            typer.echo("resumed: another process is driving it")
            return 0
        state = await drive_and_show(engine, run_id, json=json, after=state_before.head)
        return exit_code(state)

    raise typer.Exit(run(lambda: with_store(main)))


def _detach(run_id: str) -> None:
    """Drive the run in a background process of its own."""
    subprocess.Popen(
        [sys.executable, "-m", "helix", "resume", run_id],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
