"""``helix init``'s answers: what they are, and the steps that settle all but the model.

Each step takes its flag if given (a bad value is an error, exit 2), else asks at a
terminal (re-asking until the answer is good), else takes the default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import typer

from ._common import fail

T = TypeVar("T")

DEFAULT_BUDGET_USD = 2.0
DEFAULT_MAX_TURNS = 40


class Redo(Exception):
    """An answer turned out unusable: ask that step again."""


@dataclass(slots=True)
class Choices:
    """What ``helix init`` settled, before it is written."""

    workspace: str = "default"
    model: str = ""
    env: dict[str, str] = field(default_factory=dict[str, str])
    """A local server's address variable (kept under ``HELIX_HOME``, never a key)."""
    key_env: str | None = None
    """The variable the model's key is read from at run time."""
    key_optional: bool = False
    """Whether the model runs without a key (a local server may take one)."""
    tier: str = "process"
    budget_usd: float | None = DEFAULT_BUDGET_USD
    max_turns: int | None = DEFAULT_MAX_TURNS
    approval_timeout_s: float = 600.0
    deny_tools: tuple[str, ...] = ()
    network: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Flags:
    """``helix init``'s options, as given (``None``: not given)."""

    workspace: str | None
    model: str | None
    base_url: str | None
    check_key: bool
    tier: str | None
    budget: str | None
    max_turns: int | None
    approval_timeout: float | None
    deny_tools: tuple[str, ...]
    network: tuple[str, ...]


def workspace_step(project: Path, home: Path, flags: Flags, interactive: bool) -> str:
    """``--workspace``, else asked; default: the one recorded before, else the folder's name."""
    from helix.accounts import check_name
    from helix.errors import ConfigError

    def parse(name: str) -> str:
        try:
            return check_name("workspace", name)
        except ConfigError as error:
            raise ValueError(str(error)) from None

    if flags.workspace is not None:
        return flag("--workspace", parse, flags.workspace)
    from ._project import PROJECT_FILE, TrustBook, key_of

    recorded = TrustBook.load(home).projects.get(key_of(project / PROJECT_FILE))
    default = recorded.workspace if recorded else project.resolve().name
    try:
        parse(default)
    except ValueError:
        default = "default"
    if not interactive:
        return default
    from ._init_prompt import ask

    typer.echo("Runs from this project are filed under a workspace (locally, a label).")
    return ask("Workspace", parse, default=default)


def tier_step(flags: Flags, interactive: bool) -> str:
    """``--tier``, else asked from what this host gives; default: the strongest automatic.

    A tier chosen only when asked for (``podman``: a container per command) is offered,
    not proposed.
    """
    from helix.sandbox import AUTOMATIC, TIERS, tier_statuses

    statuses = tier_statuses()
    available = [s.tier for s in statuses if s.available and s.tier in AUTOMATIC]
    strongest = max(available, key=TIERS.index)

    def parse(tier: str) -> str:
        status = next((s for s in statuses if s.tier == tier), None)
        if status is None:
            raise ValueError(f"unknown sandbox tier {tier!r}: choose from {', '.join(TIERS)}")
        if not status.available:
            raise ValueError(f"the {tier} tier is not available here: {status.reason}")
        return tier

    if flags.tier is not None:
        return flag("--tier", parse, flags.tier)
    if not interactive:
        return strongest
    from ._init_prompt import ask

    typer.echo("\nSandbox tiers on this host (runs refuse to start below the one you pick):")
    for status in statuses:
        mark = "yes" if status.available else "no "
        typer.echo(f"  {status.tier:<8} {mark}  {status.reason}")
    return ask("Tier", parse, default=strongest)


def limits_step(choices: Choices, flags: Flags, interactive: bool) -> None:
    """The budget, the approvals' wait, the tools refused and the domains allowed."""
    from helix.tools import builtin_registry

    _budget_step(choices, flags, interactive)
    if flags.approval_timeout is not None:
        if not flags.approval_timeout > 0:
            fail("--approval-timeout: give a number of seconds above 0")
        choices.approval_timeout_s = flags.approval_timeout
    known = builtin_registry().names

    def tools(answer: str) -> tuple[str, ...]:
        names = tuple(dict.fromkeys(n.strip() for n in answer.split(",") if n.strip()))
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r}: known tools are {', '.join(known)}")
        return names

    if flags.deny_tools:
        choices.deny_tools = flag("--deny-tool", tools, ",".join(flags.deny_tools))
    elif interactive:
        from ._init_prompt import ask

        typer.echo(f"Tools: {', '.join(known)}")
        choices.deny_tools = ask("Tools runs may never use (comma-separated)", tools, default="")
    choices.network = tuple(flag("--network", _domain, d) for d in flags.network)


def _budget_step(choices: Choices, flags: Flags, interactive: bool) -> None:
    from helix.providers import PriceBook, parse_model_name

    from ._init_prompt import ask

    priced = PriceBook().knows(*parse_model_name(choices.model))
    if flags.budget is not None:
        choices.budget_usd = flag("--budget", _budget, flags.budget)
        if choices.budget_usd is not None and not priced:
            fail(f"--budget: {choices.model} has no known price, so a USD cap cannot bind"
                 " it: pass --budget none (or give its price in helix.yaml's prices:)")  # fmt: skip
    elif not priced:
        choices.budget_usd = None
        typer.echo(f"{choices.model} has no known price: no USD cap (set one with prices: later).")
    elif interactive:
        choices.budget_usd = ask("\nEach run's USD cap ('none': no cap)", _budget,
                                 default=f"{DEFAULT_BUDGET_USD:g}")  # fmt: skip
    if flags.max_turns is not None:
        choices.max_turns = flag("--max-turns", _turns, str(flags.max_turns))
    elif interactive:
        choices.max_turns = ask("Each run's turn cap ('none': no cap)", _turns,
                                default=str(DEFAULT_MAX_TURNS))  # fmt: skip


def flag(option: str, parse: Callable[[str], T], value: str) -> T:
    """A flag's value parsed as its question's answer would be; a bad one exits 2."""
    try:
        return parse(value)
    except ValueError as error:
        fail(f"{option}: {error}")


def _budget(answer: str) -> float | None:
    if answer.lower() == "none":
        return None
    try:
        usd = float(answer)
    except ValueError:
        raise ValueError(f"{answer!r} is not an amount in USD (or 'none')") from None
    if not usd >= 0 or usd == float("inf"):
        raise ValueError(f"{answer!r}: a USD cap is 0 or more")
    return usd


def _domain(answer: str) -> str:
    from helix.sandbox import normal_host

    if normal_host(answer.removeprefix("*.")) is None or "/" in answer:
        raise ValueError(f"{answer!r} is not a domain (e.g. pypi.org, or *.python.org)")
    return answer


def _turns(answer: str) -> int | None:
    if answer.lower() == "none":
        return None
    if not answer.isdigit() or int(answer) < 1:
        raise ValueError(f"{answer!r}: a turn cap is a whole number from 1 (or 'none')")
    return int(answer)
