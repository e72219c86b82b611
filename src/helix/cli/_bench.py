"""``helix bench SUITE``: measure, with baselines run beside."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from ._common import print_json_line, run

_DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
_POSTGRES_SUITES = {
    "eventlog": "measuring SQLite only",
    "engine": "measuring SQLite only",
    "orchestration": "measuring SQLite only",
    "distributed": "no cross_node_stream_p99_ms (streams cross servers through PostgreSQL)"
    " and no actor_restart_to_resumed_s (Ray's nodes share a PostgreSQL store)",
}
"""The suites that measure on PostgreSQL too, and what is left out without it."""


def bench(
    suite: Annotated[
        str,
        typer.Argument(
            help="The suite to run: eventlog, models, engine, world, sandbox, server, cli,"
            " extension, distributed or orchestration."
        ),
    ],
    json: Annotated[bool, typer.Option("--json", help="One JSON figure per line.")] = False,
    quick: Annotated[
        bool, typer.Option("--quick", help="Tiny sizes: a smoke test, not a measurement.")
    ] = False,
    postgres: Annotated[
        str | None,
        typer.Option(
            help="An admin URL of a PostgreSQL server to measure too (a scratch database is"
            " made and dropped). Default: $HELIX_BENCH_POSTGRES, else a local server if one"
            " answers."
        ),
    ] = None,
    no_postgres: Annotated[
        bool, typer.Option("--no-postgres", help="Measure without PostgreSQL.")
    ] = False,
) -> None:
    """Run a benchmark suite and print its figures."""
    from helix.bench import run_suite

    async def main() -> None:
        wants_postgres = suite in _POSTGRES_SUITES and not no_postgres
        url = await _postgres_url(postgres) if wants_postgres else None
        if url is None and wants_postgres:
            typer.echo(f"note: no PostgreSQL server answered; {_POSTGRES_SUITES[suite]}", err=True)
        async for figure in run_suite(suite, quick=quick, postgres_url=url):
            if json:
                print_json_line(figure.to_dict())
            else:
                line = f"{figure.name:<24} {figure.value:>14,.3f} {figure.unit:<9}"
                if figure.baseline is not None:
                    line += f" baseline {figure.baseline:>12,.1f}  ratio {figure.ratio:.2f}"
                typer.echo(f"{line}  {figure.params}")

    run(main)


async def _postgres_url(explicit: str | None) -> str | None:
    url = explicit or os.environ.get("HELIX_BENCH_POSTGRES")
    if url is not None:
        return url
    try:
        import asyncpg
    except ImportError:
        return None
    try:
        conn = await asyncpg.connect(_DEFAULT_POSTGRES, timeout=2)
    except (OSError, TimeoutError, asyncpg.PostgresError):
        return None
    await conn.close()
    return _DEFAULT_POSTGRES
