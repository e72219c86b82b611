"""``helix budgets list|set|remove``: a workspace's cumulative budgets, through the door.

With a server (``HELIX_SERVER`` or ``helix login``): its budgets, as you (only a
workspace's owners and admins set or remove one). Embedded: the budgets in the database
``HELIX_DB`` names, which the runs driven on it reserve against. docs/budgets.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from ._common import fail, print_json_line, run
from ._door import Door, with_door

if TYPE_CHECKING:
    from helix.budgets import BudgetUsage

budgets_app = typer.Typer(
    help="List, set and remove budgets per workspace, blueprint and person (per day or month)."
)

_JSON = typer.Option("--json", help="One JSON object per line.")
Workspace = Annotated[
    str | None, typer.Option("--workspace", "-w", help="The workspace (default: yours).")
]
Blueprint = Annotated[
    str | None, typer.Option("--blueprint", help="The budget of this blueprint's runs.")
]
Person = Annotated[
    str | None, typer.Option("--person", help="The budget of the runs this user makes.")
]
Period = Annotated[str, typer.Option("--period", help="day or month (UTC calendar).")]


def _kind(blueprint: str | None, person: str | None) -> tuple[str, str | None]:
    if blueprint is not None and person is not None:
        fail("give --blueprint or --person, not both (neither: the workspace's own budget)")
    if blueprint is not None:
        return "blueprint", blueprint
    if person is not None:
        return "person", person.removeprefix("user:")
    return "workspace", None


def _period(period: str) -> str:
    if period not in ("day", "month"):
        fail(f"--period {period!r}: choose day or month")
    return period


def bar(used: float, cap: float, width: int = 20) -> str:
    """A bar of ``used`` against ``cap`` (full, and marked, when at or past it)."""
    share = 1.0 if cap <= 0 else min(1.0, used / cap)
    filled = round(share * width)
    return "[" + "#" * filled + "." * (width - filled) + "]"


def budget_lines(usage: BudgetUsage) -> list[str]:
    """How one budget reads: whose, which period, and each cap with a bar."""
    budget = usage.budget
    lines = [f"{usage.scope}  {budget.period} (from {usage.period_start[:10]})"]
    if budget.usd is not None:
        used = usage.spent_usd + usage.reserved_usd
        held = f" (${usage.reserved_usd:.4f} held)" if usage.reserved_usd else ""
        lines.append(
            f"  usd     {bar(used, budget.usd)} ${used:.4f} of ${budget.usd:.4f}{held},"
            f" ${usage.left_usd or 0:.4f} left"
        )
    if budget.tokens is not None:
        used_tokens = usage.spent_tokens + usage.reserved_tokens
        held = f" ({usage.reserved_tokens} held)" if usage.reserved_tokens else ""
        lines.append(
            f"  tokens  {bar(used_tokens, budget.tokens)} {used_tokens} of {budget.tokens}{held},"
            f" {usage.left_tokens or 0} left"
        )
    return lines


@budgets_app.command("list")
def list_(workspace: Workspace = None, json: Annotated[bool, _JSON] = False) -> None:
    """The workspace's budgets: what each spent and holds this period, and what is left."""

    async def main(door: Door) -> None:
        found = await door.api.budgets(workspace=workspace)
        if json:
            for usage in found.budgets:
                print_json_line(usage.model_dump(mode="json"))
            return
        if not found.budgets:
            typer.echo(f"no budgets in {found.workspace}")
        for usage in found.budgets:
            typer.echo("\n".join(budget_lines(usage)))

    run(lambda: with_door(main))


@budgets_app.command("set")
def set_(
    workspace: Workspace = None,
    blueprint: Blueprint = None,
    person: Person = None,
    period: Period = "month",
    usd: Annotated[float | None, typer.Option("--usd", help="The USD cap.")] = None,
    tokens: Annotated[
        int | None, typer.Option("--tokens", help="The token cap (input + output).")
    ] = None,
    json: Annotated[bool, _JSON] = False,
) -> None:
    """Set a budget (replacing the one of the same kind and period): --usd, --tokens or both."""
    kind, name = _kind(blueprint, person)
    if usd is None and tokens is None:
        fail("give a cap: --usd, --tokens or both")

    async def main(door: Door) -> None:
        usage = await door.api.set_budget(
            kind, name=name, period=_period(period), usd=usd, tokens=tokens, workspace=workspace
        )
        if json:
            print_json_line(usage.model_dump(mode="json"))
        else:
            typer.echo("\n".join(budget_lines(usage)))

    run(lambda: with_door(main))


@budgets_app.command("remove")
def remove(
    workspace: Workspace = None,
    blueprint: Blueprint = None,
    person: Person = None,
    period: Period = "month",
) -> None:
    """Remove a budget (what its runs spent stays counted, should it be set again)."""
    kind, name = _kind(blueprint, person)

    async def main(door: Door) -> None:
        await door.api.remove_budget(kind, name=name, period=_period(period), workspace=workspace)
        typer.echo(f"removed the {period} budget of {kind if name is None else f'{kind}:{name}'}")

    run(lambda: with_door(main))
