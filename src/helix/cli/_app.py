"""The ``helix`` command: one Typer app, commands wired in one place."""

from __future__ import annotations

import typer

from helix._version import __version__

from ._admin import tokens_app, users_app, workspaces_app
from ._bench import bench
from ._control import approve, cancel, deny, pause, steer
from ._demo import demo
from ._doctor import doctor
from ._login import login, status
from ._logs import export, import_, logs, replay
from ._models import models_app
from ._policy import policy_app
from ._run import resume, run_command
from ._runs import fork, runs, show
from ._sandbox import sandbox_app
from ._schema import schema_app
from ._serve import serve
from ._spend import spend
from ._tui import tui
from ._world import compare, diff, files, keep, rollback

app = typer.Typer(
    name="helix",
    help="Helix: supervised agent runs whose event log is the session.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"helix {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """Helix: supervised agent runs whose event log is the session."""


app.command()(demo)
app.command("run")(run_command)
app.command()(resume)
app.command()(approve)
app.command()(deny)
app.command()(steer)
app.command()(pause)
app.command()(cancel)
app.command()(runs)
app.command()(show)
app.command()(logs)
app.command()(replay)
app.command()(fork)
app.command()(export)
app.command("import")(import_)
app.command()(bench)
app.command()(files)
app.command()(diff)
app.command()(rollback)
app.command()(compare)
app.command()(keep)
app.command()(spend)
app.add_typer(schema_app, name="schema")
app.add_typer(models_app, name="models")
app.command()(doctor)
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(policy_app, name="policy")
app.command()(serve)
app.command()(tui)
app.command()(login)
app.command()(status)
app.add_typer(users_app, name="users")
app.add_typer(tokens_app, name="tokens")
app.add_typer(workspaces_app, name="workspaces")
