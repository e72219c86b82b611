"""``helix schema events``: the JSON Schema of every event."""

from __future__ import annotations

import json

import typer

schema_app = typer.Typer(help="Print machine-readable schemas.", no_args_is_help=True)


@schema_app.command("events")
def events() -> None:
    """Print the JSON Schema of the event envelope and every payload."""
    from helix.kernel.events import DEFAULT_REGISTRY

    typer.echo(json.dumps(DEFAULT_REGISTRY.json_schema(), indent=2, sort_keys=True))
