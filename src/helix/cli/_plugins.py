"""``helix plugins``: list the plugins found here, show one, turn one off or on again.

Listing loads every plugin that is not disabled (its code runs, as it would in a run)
and checks its contract; ``enable`` and ``disable`` only change the switches under
HELIX_HOME (``plugins.json``) and run no plugin code.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from ._common import EXIT_NOT_FOUND, fail, print_json_line, run_now

if TYPE_CHECKING:
    from helix.plugins import PluginInfo, Plugins

_JSON = typer.Option("--json", help="One JSON object per line.")
_NAME = typer.Argument(metavar="NAME", help="The plugin's name (as `helix plugins list` shows).")

plugins_app = typer.Typer(
    help="List, show, enable and disable plugins (tools, gates, components from outside).",
    no_args_is_help=True,
)


@plugins_app.command("list")
def list_command(json: Annotated[bool, _JSON] = False) -> None:
    """List every plugin found: version, source, active or why not, what it provides."""
    plugins = _loaded()
    infos = plugins.listing()
    if json:
        for info in infos:
            print_json_line(info.to_dict())
        return
    if not infos:
        typer.echo("no plugins found (install one, or point HELIX_PLUGINS at a folder)")
        return
    for info in infos:
        typer.echo(
            f"{info.name:<20} {info.version or '-':<18} {_source(info):<12} {info.status:<9}"
            f" {_provided(info)}"
        )
        if info.reason:
            typer.echo(f"  {info.reason}")


@plugins_app.command("info")
def info_command(name: Annotated[str, _NAME], json: Annotated[bool, _JSON] = False) -> None:
    """Show one plugin: where it comes from, its state, what it provides and needs."""
    plugins = _loaded()
    if name not in plugins.found():
        fail(f"unknown plugin {name!r}; {_known(plugins)}", EXIT_NOT_FOUND)
    info = plugins.info(name)
    if json:
        print_json_line(info.to_dict())
        return
    typer.echo(f"name:       {info.name}")
    typer.echo(f"version:    {info.version or '-'}")
    typer.echo(f"source:     {_source(info)} ({info.location})")
    typer.echo(f"status:     {info.status}" + (f": {info.reason}" if info.reason else ""))
    typer.echo(f"requires:   {', '.join(info.requires) or 'nothing'}")
    for kind, names in info.provides.items():
        if names:
            typer.echo(f"{kind + ':':<11} {', '.join(names)}")


@plugins_app.command("enable")
def enable_command(name: Annotated[str, _NAME]) -> None:
    """Turn a disabled plugin on again: runs may name it (its code loads when needed)."""
    _switch(name, disabled=False)


@plugins_app.command("disable")
def disable_command(name: Annotated[str, _NAME]) -> None:
    """Turn a plugin off: it is not loaded, and runs naming it are refused."""
    _switch(name, disabled=True)


def _switch(name: str, *, disabled: bool) -> None:
    from helix.plugins import set_disabled

    plugins = _plugins()
    if name not in plugins.found():
        fail(f"unknown plugin {name!r}; {_known(plugins)}", EXIT_NOT_FOUND)
    assert plugins.home is not None
    home = plugins.home
    changed = run_now(lambda: set_disabled(home, name, disabled))
    word = "disabled" if disabled else "enabled"
    typer.echo(f"{name} {word}" if changed else f"{name} was {word} already")


def _plugins() -> Plugins:
    from helix.config import Settings
    from helix.plugins import Plugins

    settings = run_now(Settings.from_env)
    return Plugins(home=settings.home, env=dict(os.environ))


def _loaded() -> Plugins:
    plugins = _plugins()
    run_now(plugins.refresh_now)
    return plugins


def _known(plugins: Plugins) -> str:
    names = plugins.found()
    return "known plugins are " + ", ".join(names) if names else "no plugins are installed"


def _source(info: PluginInfo) -> str:
    return "entry point" if info.source == "entry_point" else "folder"


def _provided(info: PluginInfo) -> str:
    parts = [f"{kind} {', '.join(names)}" for kind, names in info.provides.items() if names]
    return "; ".join(parts) or "-"
