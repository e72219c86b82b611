"""``helix serve``: the control-plane server (API, live streams, dashboard)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from helix.config import Settings
from helix.errors import HelixError

from ._common import exit_code_for, fail, run


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8420,
    public_url: Annotated[
        str | None,
        typer.Option(
            help="Where people reach it (for links); default: HELIX_PUBLIC_URL, else host:port."
        ),
    ] = None,
    resume: Annotated[bool, typer.Option(help="Resume every unfinished run on start.")] = True,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            envvar="HELIX_FORWARDED_ALLOW_IPS",
            help="Proxies whose X-Forwarded-For is believed: comma-separated addresses or"
            " networks, or *; default: none (the socket's peer address is the client's).",
        ),
    ] = "",
    scripts: Annotated[
        Path | None,
        typer.Option(
            envvar="HELIX_SCRIPTS",
            help="Folder of scenario files scripted:PATH models may play (PATH relative to"
            " it); default: scripted models are refused.",
        ),
    ] = None,
) -> None:
    """Serve the REST and WebSocket API and the dashboard; runs are driven here."""
    import uvicorn

    from helix.server import ServerConfig, create_app, parse_forwarded_allow_ips

    try:
        settings = Settings.from_env()
        proxies = parse_forwarded_allow_ips(forwarded_allow_ips)
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    if scripts is not None and not scripts.is_dir():
        fail(f"--scripts {scripts}: not a directory")
    notify = settings.notify
    if notify and importlib.util.find_spec("apprise") is None:
        fail("HELIX_NOTIFY needs Apprise: pip install 'helix-harness[notify]'")
    config = ServerConfig(
        db_url=settings.db_url,
        home=settings.home,
        durability=settings.durability,
        public_url=(public_url or settings.public_url or f"http://{host}:{port}").rstrip("/"),
        resume_on_start=resume,
        notify=notify,
        forwarded_allow_ips=proxies,
        scripts=scripts.resolve() if scripts is not None else None,
    )
    _check_port(host, port)
    run(lambda: _preflight(settings))
    typer.echo(f"helix serving on http://{host}:{port}", err=True)
    from helix._util import tune_gc_for_many_runs

    tune_gc_for_many_runs()  # a server may hold thousands of runs
    app = create_app(config)
    # The app believes forwarded headers from --forwarded-allow-ips only; uvicorn's own
    # proxy handling (which trusts 127.0.0.1 by default) would rewrite the client first.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        ws="websockets-sansio",
        proxy_headers=False,
    )


async def _preflight(settings: Settings) -> None:
    """Open the store and the accounts once, so a bad HELIX_DB is a message, not a trace."""
    from helix.accounts import open_accounts
    from helix.kernel.log import open_store

    store = await open_store(settings.db_url, durability=settings.durability)
    await store.close()
    accounts = await open_accounts(settings.db_url)
    await accounts.close()


def _check_port(host: str, port: int) -> None:
    """Fail before the first start's account is made if the address is taken."""
    import socket

    try:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as error:
        fail(f"cannot listen on {host}:{port}: {error.strerror}; choose another --port")
