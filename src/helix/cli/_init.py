"""``helix init``: set a project up in a minute, by questions or by flags.

It names the workspace, picks a model (checking the provider's key, or listing a local
server's models), the weakest sandbox tier runs accept (from what this host gives), the
budget and the tools' ceiling; then writes ``helix.yaml`` in the project folder and
trusts it (``_project``). Questions are asked only at a terminal and without ``--yes``;
every answer has a flag, and a flag's bad value is an error (exit 2). Nothing is written
before the end, and never a key.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import EXIT_USAGE, fail

if TYPE_CHECKING:
    from helix.runtime import Blueprint

    from ._init_steps import Choices, Flags


def init(
    workspace: Annotated[
        str | None, typer.Option(help="Where runs from this project are filed.")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="provider:model, e.g. openai:gpt-4.1 or ollama:qwen2.5-coder:7b; a local"
            " provider alone (ollama, llamacpp, vllm, lmstudio) takes the one model its"
            " server lists."
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="A local server's OpenAI-compatible address, e.g. http://127.0.0.1:8080/v1.",
        ),
    ] = None,
    check_key: Annotated[
        bool,
        typer.Option("--check-key", help="Verify the API key with one cheap authenticated call."),
    ] = False,
    tier: Annotated[
        str | None,
        typer.Option(
            help="The weakest sandbox tier runs accept: process, bwrap or docker"
            " (default: the strongest this host gives)."
        ),
    ] = None,
    budget: Annotated[
        str | None,
        typer.Option(help="Each run's USD cap, or 'none' (default: 2 if the model has a price)."),
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option("--max-turns", help="Each run's turn cap (default 40).")
    ] = None,
    approval_timeout: Annotated[
        float | None,
        typer.Option(
            "--approval-timeout", help="Seconds an approval waits before it is denied (600)."
        ),
    ] = None,
    deny_tool: Annotated[
        list[str] | None,
        typer.Option("--deny-tool", help="A tool runs may never use (repeat it)."),
    ] = None,
    network: Annotated[
        list[str] | None,
        typer.Option("--network", help="A domain commands may reach (repeat it)."),
    ] = None,
    dir: Annotated[
        str | None, typer.Option("--dir", help="The project folder (default: here).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Ask nothing: take the flags and defaults.")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing helix.yaml.")] = False,
    trust: Annotated[
        bool,
        typer.Option("--trust", help="Trust the helix.yaml here as it is now (after review)."),
    ] = False,
) -> None:
    """Set this project up: workspace, model, sandbox tier, budget; write helix.yaml.

    helix run here then uses it (docs/init.md).
    """
    from helix.config import Settings
    from helix.errors import HelixError

    from ._common import exit_code_for
    from ._init_prompt import Cancelled
    from ._init_steps import Flags

    interactive = sys.stdin.isatty() and not yes
    flags = Flags(
        workspace, model, base_url, check_key, tier, budget, max_turns, approval_timeout,
        tuple(deny_tool or ()), tuple(network or ()),
    )  # fmt: skip
    project = Path(dir).expanduser() if dir else Path.cwd()
    try:
        if not project.is_dir():
            fail(f"--dir: {project} is not a folder")
        home = Settings.from_env().home
        if trust:
            _trust(project, home, flags, interactive=interactive, yes=yes)
        else:
            _setup(project, home, flags, interactive=interactive, force=force)
    except (Cancelled, KeyboardInterrupt) as stopped:
        typer.echo("init cancelled: nothing was written", err=True)
        raise typer.Exit(stopped.code if isinstance(stopped, Cancelled) else 130) from None
    except HelixError as error:
        fail(str(error), exit_code_for(error))


def _setup(project: Path, home: Path, flags: Flags, *, interactive: bool, force: bool) -> None:
    from ._init_model import model_step
    from ._init_prompt import Cancelled, confirm
    from ._init_steps import Choices, limits_step, tier_step, workspace_step
    from ._project import PROJECT_FILE

    target = project / PROJECT_FILE
    if target.exists() and not force:
        if not interactive:
            fail(f"{target} exists: --force replaces it, --trust trusts it as it is")
        if not confirm(f"{target} exists. Replace it?", default=False):
            raise Cancelled(1)
    if interactive:
        typer.echo(f"Setting up {project} for Helix (Enter takes the [default]).\n")
    choices = Choices()
    choices.workspace = workspace_step(project, home, flags, interactive)
    model_step(choices, flags, interactive)
    choices.tier = tier_step(flags, interactive)
    limits_step(choices, flags, interactive)
    blueprint = _blueprint(project, choices)
    text = render(blueprint, choices)
    if interactive:
        typer.echo("\n" + text)
        if not confirm(f"Write {target}?", default=True):
            raise Cancelled(1)
    _write(target, text, home, choices)


# -- writing -----------------------------------------------------------------------------


def _blueprint(project: Path, choices: Choices) -> Blueprint:
    from helix.gates import Policy
    from helix.kernel.events import Budget
    from helix.runtime import ApprovalSettings, Blueprint, SandboxSettings
    from helix.tools import builtin_registry

    blueprint = Blueprint(
        name=project.resolve().name or "default",
        model=choices.model,
        budget=Budget(usd=choices.budget_usd, max_turns=choices.max_turns),
        approvals=ApprovalSettings(timeout_s=choices.approval_timeout_s),
        sandbox=SandboxSettings(kind=choices.tier, network=choices.network),
        policy=Policy(deny_tools=frozenset(choices.deny_tools)),
    )
    return blueprint.check(builtin_registry())


def render(blueprint: Blueprint, choices: Choices) -> str:
    """``helix.yaml``'s text: the blueprint's settings under a comment saying how it is used."""
    import yaml

    data = blueprint.model_dump(mode="json", exclude_defaults=True)
    data.setdefault("sandbox", {})["kind"] = choices.tier
    if choices.deny_tools:
        data["policy"] = {"deny_tools": sorted(choices.deny_tools)}
    when = " (if the server needs one)" if choices.key_optional else ""
    key = (
        f"# The model's key is read from {choices.key_env}{when} when a run starts: Helix\n"
        "# never writes a key to a file.\n"
        if choices.key_env
        else ""
    )
    header = (
        "# Written by `helix init`. `helix run` in this folder uses it while it is unchanged\n"
        "# (its SHA-256 is kept under HELIX_HOME); after editing it, `helix init --trust`.\n"
        f"{key}"
    )
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def _write(target: Path, text: str, home: Path, choices: Choices) -> None:
    from ._project import ProjectRecord, TrustBook, digest, parse_project

    content = text.encode("utf-8")
    parse_project(target, content)  # what is written reads back as it was meant
    book = TrustBook.load(home)
    try:
        _replace(target, content)
    except OSError as error:
        fail(f"cannot write {target}: {error.strerror}")
    record = ProjectRecord(sha256=digest(content), workspace=choices.workspace, env=choices.env)
    saved = book.with_record(target, record).save(home)
    typer.echo(f"wrote {target}")
    typer.echo(f"trusted it in {saved} (workspace {choices.workspace})")
    for variable, value in choices.env.items():
        typer.echo(f"runs here set {variable}={value} unless it is set already")
    if choices.key_env and not choices.key_optional:
        typer.echo(f"next: export {choices.key_env}=…   (Helix never writes keys to files)")
    typer.echo('then: helix run "describe this project"')


def _replace(target: Path, content: bytes) -> None:
    """Write ``target`` whole, replacing the name (never writing through a link there)."""
    import os
    import tempfile

    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".helix-", suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _trust(project: Path, home: Path, flags: Flags, *, interactive: bool, yes: bool) -> None:
    from ._init_prompt import Cancelled, confirm
    from ._project import (
        PROJECT_FILE,
        ProjectRecord,
        TrustBook,
        digest,
        key_of,
        parse_project,
        read_project_file,
        weakenings,
    )

    target = project / PROJECT_FILE
    content = read_project_file(target)
    if content is None:
        fail(f"no {PROJECT_FILE} in {project}: `helix init` writes one")
    blueprint = parse_project(target, content)
    book = TrustBook.load(home)
    old = book.projects.get(key_of(target))
    workspace = flags.workspace or (old.workspace if old else "default")
    if flags.workspace is not None:
        from helix.accounts import check_name

        check_name("workspace", workspace)
    loose = weakenings(blueprint)
    typer.echo(f"{target}:")
    typer.echo(f"  model: {blueprint.model or '(none: pass --model to each run)'}")
    typer.echo(f"  sandbox tier at least: {blueprint.sandbox.kind}")
    for line in loose or ["(it weakens no default)"]:
        typer.echo(f"  {line}")
    if interactive:
        if not confirm("Trust it as it is?", default=False):
            raise Cancelled(1)
    elif not yes:
        fail("--trust asks first: pass --yes to trust it without a terminal", EXIT_USAGE)
    record = ProjectRecord(
        sha256=digest(content), workspace=workspace, env=dict(old.env) if old else {}
    )
    saved = book.with_record(target, record).save(home)
    typer.echo(f"trusted {target} in {saved} (workspace {workspace})")
