"""``helix sandbox run``: one command, run exactly as a run's ``run_command`` would.

For trying a policy before a run relies on it: the same tier resolution, the same
environment scrubbing and limits, the same filtering proxy for ``--network`` hosts
(each decision printed to stderr). The exit code is the command's own; ``124`` when
it timed out, ``128+N`` when a signal killed it.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from ._common import EXIT_NOT_FOUND, EXIT_USAGE, fail, run

sandbox_app = typer.Typer(help="Run commands in a sandbox tier, as runs do.", no_args_is_help=True)

EXIT_TIMED_OUT = 124


@sandbox_app.command("run")
def sandbox_run(
    command: Annotated[
        list[str] | None, typer.Argument(metavar="-- CMD…", help="The command and its arguments.")
    ] = None,
    dir: Annotated[
        str | None, typer.Option("--dir", help="The world directory (default: here).")
    ] = None,
    tier: Annotated[
        str | None,
        typer.Option(help="process, bwrap or docker (default: the strongest available)."),
    ] = None,
    network: Annotated[
        str | None,
        typer.Option(help="Hosts the command may reach through the proxy: HOST,*.DOMAIN,…"),
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds before it is killed.")] = 120,
) -> None:
    """Run CMD in the sandbox a run would use, in --dir, and exit with its exit code."""
    from helix.sandbox import EgressDecision, EgressPolicy, policy_hook, resolve_sandbox

    words = list(command or [])
    if not words or not any(w.strip() for w in words):
        fail("no command: give it after --, e.g. helix sandbox run -- ls -la", EXIT_USAGE)
    text = words[0] if len(words) == 1 else shlex.join(words)
    world = Path(dir).expanduser() if dir else Path.cwd()
    if not world.is_dir():
        fail(f"the world {world} is not a directory", EXIT_NOT_FOUND)
    hosts = tuple(h.strip() for h in (network or "").split(",") if h.strip())

    async def record(decision: EgressDecision) -> None:
        typer.echo(
            f"egress: {decision.verdict} {decision.host}:{decision.port} ({decision.reason})",
            err=True,
        )

    async def main() -> int:
        sandbox = resolve_sandbox(tier)
        typer.echo(f"sandbox: {sandbox.tier} ({sandbox.reason})", err=True)
        hook = policy_hook(EgressPolicy(allow=hosts), record) if hosts else None
        result = await sandbox.run(text, cwd=world.resolve(), timeout_s=timeout, egress=hook)
        typer.echo(result.output, nl=False)
        if result.timed_out:
            typer.echo(f"timed out after {timeout:g}s: killed", err=True)
            return EXIT_TIMED_OUT
        code = result.exit_code if result.exit_code is not None else EXIT_TIMED_OUT
        return 128 - code if code < 0 else code

    raise typer.Exit(run(main))
