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
    executor: Annotated[
        str,
        typer.Option(
            envvar="HELIX_EXECUTOR",
            help="Where runs are driven: processes (worker processes of this machine),"
            " local (in the server's process) or ray (an actor per run on the cluster at"
            " --ray-address; token: HELIX_RAY_TOKEN).",
        ),
    ] = "processes",
    workers: Annotated[
        str,
        typer.Option(
            envvar="HELIX_WORKERS",
            help="Worker processes of the processes executor; default: the CPU count.",
        ),
    ] = "",
    ray_address: Annotated[
        str | None,
        typer.Option(
            envvar="HELIX_RAY_ADDRESS", help="The Ray cluster's HOST:PORT (with --executor ray)."
        ),
    ] = None,
) -> None:
    """Serve the REST and WebSocket API and the dashboard; runs are driven here."""
    import uvicorn

    from helix.distributed import parse_executor, parse_workers
    from helix.server import ServerConfig, create_app, parse_forwarded_allow_ips
    from helix.telemetry import read_otel_settings

    try:
        settings = Settings.from_env()
        proxies = parse_forwarded_allow_ips(forwarded_allow_ips)
        otel = read_otel_settings()
        kind = parse_executor(executor)
        count = parse_workers(workers)
    except HelixError as error:
        fail(str(error), exit_code_for(error))
    if scripts is not None and not scripts.is_dir():
        fail(f"--scripts {scripts}: not a directory")
    _check_executor(kind, ray_address, settings.db_url)
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
        otel=otel,
        executor=kind,
        workers=count,
        ray_address=ray_address,
    )
    _check_port(host, port)
    run(lambda: _preflight(settings))
    where = f"{count} worker processes" if kind == "processes" else f"the {kind} executor"
    typer.echo(f"helix serving on http://{host}:{port} (runs: {where})", err=True)
    if otel is not None:
        typer.echo(f"exporting traces to {otel.shown} ({otel.source})", err=True)
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


def _check_executor(executor: str, ray_address: str | None, db_url: str) -> None:
    """Refuse an executor that cannot work here, naming the fix."""
    import os

    from helix.distributed import ray_address_of

    if executor != "ray":
        if ray_address is not None:
            fail("--ray-address is for --executor ray")
        return
    if ray_address is None:
        fail("--executor ray needs the cluster's address: --ray-address HOST:PORT")
    if not db_url.startswith("postgresql"):
        fail(
            "--executor ray needs a store every node reaches: HELIX_DB=postgresql://…"
            " (a SQLite file is this machine's)"
        )
    try:
        ray_address_of(ray_address, os.environ)
    except HelixError as error:
        fail(str(error), exit_code_for(error))


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
