"""``helix automations list|add|pause|resume|remove``: a workspace's triggers, through the door.

With a server (``HELIX_SERVER`` or ``helix login``): its automations, as you. Embedded:
the automations in the database ``HELIX_DB`` names (what a ``helix serve`` on it fires),
with targets checked against that database's stored blueprints.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from ._common import fail, print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.automations import Automation

T = TypeVar("T")

_JSON = typer.Option("--json", help="One JSON object per line.")
_WORKSPACE = typer.Option("--workspace", "-w", help="The workspace (default: yours).")

automations_app = typer.Typer(
    help="List, add, pause, resume and remove automations (cron, webhook, run event)."
)


async def _with_automations(use: Callable[[Door], Awaitable[T]]) -> T:
    """``with_door``, with the embedded door given the database's automations."""

    async def main(door: Door) -> T:
        if door.local is None:
            return await use(door)
        from helix.accounts import Accounts, open_accounts
        from helix.api import AutomationSetup
        from helix.automations import open_automations
        from helix.config import Settings
        from helix.runtime import Blueprint

        url = Settings.from_env().db_url
        store = await open_automations(url)
        accounts = await open_accounts(url)
        try:

            async def blueprint(workspace: str, name: str) -> Blueprint:
                body = (await Accounts(accounts).blueprint(workspace, name)).body
                return Blueprint.parse(body, source="invalid blueprint", name=name)

            door.local.automation_setup = AutomationSetup(store, blueprint)
            return await use(door)
        finally:
            await accounts.close()
            await store.close()

    return await with_door(main)


def _line(automation: Automation) -> str:
    trigger = automation.trigger
    when = {"cron": f"cron '{getattr(trigger, 'cron', '')}'", "webhook": "webhook"}.get(
        trigger.kind, f"on {getattr(trigger, 'event', '')}"
    )
    state = "paused" if automation.paused else f"next {automation.next_firing or '-'}"
    last = automation.last_firing
    fired = "never fired"
    if last is not None:
        fired = f"last {last.fired_at} → {last.run_id or 'error: ' + (last.error or '?')}"
    target = automation.target
    what = getattr(target, "blueprint", None) or getattr(target, "workflow", None) or ""
    return (
        f"{automation.id}  {automation.workspace}/{automation.name}  {when}  →"
        f" {target.kind} {what}  missed={automation.missed}  {state}  {fired}"
    )


def _show(automation: Automation, json: bool) -> None:
    if json:
        print_json_line(automation.model_dump(mode="json"))
    else:
        typer.echo(_line(automation))


@automations_app.command("list")
def list_automations(
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """List automations: trigger, target, policy, next firing, last firing and its run."""

    async def main(door: Door) -> None:
        listed = await door.api.automations(workspace=workspace)
        if not listed.automations and not json:
            typer.echo("no automations")
        for automation in listed.automations:
            _show(automation, json)

    run(lambda: _with_automations(main))


def _trigger(
    cron: str | None, timezone: str, webhook: bool, on: str | None, of: str | None
) -> dict[str, Any]:
    chosen = [
        name for name, given in (("--cron", cron), ("--webhook", webhook), ("--on", on)) if given
    ]
    if len(chosen) != 1:
        fail(
            "give exactly one trigger: --cron EXPR, --webhook,"
            " or --on run.failed|run.completed|run.cancelled"
        )
    if cron:
        return {"kind": "cron", "cron": cron, "timezone": timezone}
    if webhook:
        return {"kind": "webhook"}
    return {"kind": "event", "event": on, "blueprint": of}


@automations_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="A name, unique in the workspace.")],
    blueprint: Annotated[
        str, typer.Option("--blueprint", "-b", help="The stored blueprint to run.")
    ],
    objective: Annotated[str, typer.Option("--objective", "-o", help="What the run should do.")],
    cron: Annotated[
        str | None, typer.Option("--cron", help="Five-field cron: '0 3 * * *'.")
    ] = None,
    timezone: Annotated[str, typer.Option("--timezone", help="The cron's time zone.")] = "UTC",
    webhook: Annotated[bool, typer.Option("--webhook", help="Fire on a signed POST.")] = False,
    on: Annotated[
        str | None,
        typer.Option(
            "--on", help="Fire when a run ends: run.failed, run.completed, run.cancelled."
        ),
    ] = None,
    of: Annotated[
        str | None, typer.Option("--of", help="--on: only runs of this blueprint.")
    ] = None,
    missed: Annotated[
        str, typer.Option("--missed", help="Missed cron slots: skip, once or all.")
    ] = "once",
    model: Annotated[
        str | None, typer.Option("--model", help="Override the blueprint's model.")
    ] = None,
    workspace: Annotated[str | None, _WORKSPACE] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Add an automation; a webhook's signing secret is printed once, and never again."""
    from pydantic import ValidationError

    from helix.automations import AutomationSpec

    body = {
        "name": name,
        "trigger": _trigger(cron, timezone, webhook, on, of),
        "target": {
            "kind": "blueprint",
            "blueprint": blueprint,
            "objective": objective,
            "model": model,
        },
        "missed": missed,
    }
    try:
        spec = AutomationSpec.model_validate(body)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        fail(f"invalid automation: {problems}")

    async def main(door: Door) -> None:
        created = await door.api.add_automation(spec, workspace=workspace)
        if json:
            print_json_line(created.model_dump(mode="json"))
            return
        typer.echo(_line(created.automation))
        if created.secret is not None:
            typer.echo(
                f"webhook: POST /api/v1/hooks/{created.automation.id}\n"
                f"secret (shown once, keep it safe): {created.secret}"
            )

    run(lambda: _with_automations(main))


def _one(action: str) -> Callable[..., None]:
    def command(
        automation_id: Annotated[str, typer.Argument(metavar="ID", help="The automation's id.")],
        json: Annotated[bool, _JSON] = False,
    ) -> None:
        async def main(door: Door) -> None:
            if action == "remove":
                await door.api.remove_automation(automation_id)
                if json:
                    print_json_line({"id": automation_id, "removed": True})
                else:
                    typer.echo(f"removed {automation_id}")
                return
            change = door.api.pause_automation if action == "pause" else door.api.resume_automation
            _show(await change(automation_id), json)

        run(lambda: _with_automations(main))

    return command


automations_app.command("pause", help="Pause an automation: it fires nothing until resumed.")(
    _one("pause")
)
automations_app.command("resume", help="Resume an automation: it fires again from now on.")(
    _one("resume")
)
automations_app.command("remove", help="Remove an automation (the runs it started stay).")(
    _one("remove")
)
