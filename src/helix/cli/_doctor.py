"""``helix doctor``: what this host gives Helix, and what is missing.

Sandbox tiers (which, and why not), the store (where, and whether it opens), model
provider keys (present or not, never their values), trace export (off, or where to;
never its headers). Exit code 1 if the store cannot be opened, else 0.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Annotated, Any
from urllib.parse import urlsplit, urlunsplit

import typer

from helix._version import __version__

from ._common import EXIT_FAILED, EXIT_OK, print_json_line


def doctor(
    json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """Check the sandbox tiers, the store, the model keys and trace export here."""
    import asyncio

    report = asyncio.run(_report())
    if json:
        print_json_line(report)
    else:
        _print(report)
    raise typer.Exit(EXIT_OK if report["store"]["ok"] else EXIT_FAILED)


async def _report() -> dict[str, Any]:
    from helix.providers import PROVIDERS
    from helix.sandbox import resolve_sandbox, sandbox_facts, tier_statuses

    chosen = resolve_sandbox()
    keys = {
        spec.key_env: bool(os.environ.get(spec.key_env))
        for spec in PROVIDERS.values()
        if spec.key_env and spec.key_required
    }
    return {
        "version": __version__,
        "python": platform.python_version(),
        "sandbox": {
            "default": chosen.tier,
            "reason": chosen.reason,
            "tiers": [
                {
                    "tier": s.tier,
                    "available": s.available,
                    "reason": s.reason,
                    "live": s.live,
                    "checkpoints": s.checkpoints,
                }
                for s in tier_statuses()
            ],
            **sandbox_facts(),
        },
        "store": await _store(),
        "model_keys": dict(sorted(keys.items())),
        "traces": _traces(),
    }


def _traces() -> dict[str, Any]:
    """Whether runs' traces are exported, where to, and what is wrong with the setting."""
    from helix.errors import HelixError
    from helix.telemetry import read_otel_settings

    try:
        otel = read_otel_settings()
    except HelixError as error:
        return {"on": False, "endpoint": None, "source": None, "error": str(error)}
    if otel is None:
        return {"on": False, "endpoint": None, "source": None, "error": None}
    return {"on": True, "endpoint": otel.shown, "source": otel.source, "error": None}


async def _store() -> dict[str, Any]:
    from helix.config import Settings
    from helix.errors import HelixError
    from helix.kernel.log import open_store

    try:
        settings = Settings.from_env()
    except HelixError as error:
        return {"ok": False, "url": None, "home": None, "error": str(error)}
    shown = _without_password(settings.db_url)
    info: dict[str, Any] = {"ok": True, "url": shown, "home": str(settings.home), "error": None}
    try:
        store = await asyncio_timeout(open_store(settings.db_url, durability=settings.durability))
        await store.close()
    except (HelixError, OSError, TimeoutError) as error:
        info |= {"ok": False, "error": str(error).replace(settings.db_url, shown)}
    return info


async def asyncio_timeout(opening: Any) -> Any:
    import asyncio

    return await asyncio.wait_for(opening, 15)


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def _print(report: dict[str, Any]) -> None:
    sandbox = report["sandbox"]
    typer.echo(f"helix {report['version']} (python {report['python']}, {sys.platform})")
    typer.echo(f"sandbox: {sandbox['default']} — {sandbox['reason']}")
    for tier in sandbox["tiers"]:
        mark = "yes" if tier["available"] else "no "
        keeps = "live + checkpoints" if tier["checkpoints"] else "live" if tier["live"] else ""
        typer.echo(f"  {tier['tier']:<8} {mark}  {tier['reason']}{f'  ({keeps})' if keeps else ''}")
    typer.echo(f"  seccomp filter: {'yes' if sandbox['seccomp'] else 'no'}")
    typer.echo(f"  pids cgroup:    {'yes' if sandbox['pids_cgroup'] else 'no (rlimits only)'}")
    store = report["store"]
    state = "ok" if store["ok"] else f"FAILED: {store['error']}"
    typer.echo(f"store: {store['url']} — {state}")
    typer.echo(f"  data directory: {store['home']}")
    traces = report["traces"]
    if traces["error"] is not None:
        typer.echo(f"traces: FAILED: {traces['error']}")
    elif traces["on"]:
        typer.echo(f"traces: exported to {traces['endpoint']} ({traces['source']})")
    else:
        typer.echo("traces: not exported (set HELIX_OTEL_ENDPOINT)")
    typer.echo("model keys:")
    for name, present in report["model_keys"].items():
        typer.echo(f"  {name:<22} {'set' if present else 'not set'}")
