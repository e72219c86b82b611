"""``helix serve``: the control-plane server (API, live streams, dashboard)."""

from __future__ import annotations

import importlib.util
import os
from typing import Annotated

import typer

from helix.config import Settings
from helix.errors import HelixError

from ._common import exit_code_for, fail


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8420,
    public_url: Annotated[
        str | None, typer.Option(help="Where people reach it (for links); default: host:port.")
    ] = None,
    resume: Annotated[bool, typer.Option(help="Resume every unfinished run on start.")] = True,
) -> None:
    """Serve the REST and WebSocket API and the dashboard; runs are driven here."""
    import uvicorn

    from helix.server import ServerConfig, create_app

    try:
        settings = Settings.from_env()
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    notify = tuple(os.environ.get("HELIX_NOTIFY", "").split())
    if notify and importlib.util.find_spec("apprise") is None:
        fail("HELIX_NOTIFY needs Apprise: pip install 'helix-harness[notify]'")
    config = ServerConfig(
        db_url=settings.db_url,
        home=settings.home,
        durability=settings.durability,
        public_url=(public_url or f"http://{host}:{port}").rstrip("/"),
        resume_on_start=resume,
        notify=notify,
    )
    typer.echo(f"helix serving on http://{host}:{port}", err=True)
    app = create_app(config)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws="websockets-sansio")
