"""The benchmark suites ``helix bench`` knows, by name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from helix.errors import ConfigError

from ._figure import Figure

SUITES = (
    "eventlog",
    "models",
    "engine",
    "world",
    "sandbox",
    "server",
    "cli",
    "extension",
    "distributed",
    "orchestration",
)


def run_suite(
    name: str, *, quick: bool = False, postgres_url: str | None = None, workdir: Path | None = None
) -> AsyncIterator[Figure]:
    """Start the suite called ``name``; its figures arrive as they are measured."""
    if name == "eventlog":
        from ._eventlog import EventlogSizes, run_eventlog

        sizes = EventlogSizes.quick() if quick else EventlogSizes()
        return run_eventlog(sizes, postgres_url=postgres_url, workdir=workdir)
    if name == "models":
        from ._models import ModelsSizes, run_models

        return run_models(ModelsSizes.quick() if quick else ModelsSizes())
    if name == "engine":
        from ._engine import EngineSizes, run_engine

        engine_sizes = EngineSizes.quick() if quick else EngineSizes()
        return run_engine(engine_sizes, workdir=workdir, postgres_url=postgres_url)
    if name == "world":
        from ._world import WorldSizes, run_world

        return run_world(WorldSizes.quick() if quick else WorldSizes(), workdir=workdir)
    if name == "sandbox":
        from ._sandbox import SandboxSizes, run_sandbox

        return run_sandbox(SandboxSizes.quick() if quick else SandboxSizes())
    if name == "server":
        from ._server import ServerSizes, run_server_bench

        return run_server_bench(ServerSizes.quick() if quick else ServerSizes(), workdir=workdir)
    if name == "cli":
        from ._cli import CliSizes, run_cli

        return run_cli(CliSizes.quick() if quick else CliSizes())
    if name == "extension":
        from ._extension import ExtensionSizes, run_extension

        return run_extension(ExtensionSizes.quick() if quick else ExtensionSizes(), workdir=workdir)
    if name == "distributed":
        from ._distributed import DistributedSizes, run_distributed

        spread = DistributedSizes.quick() if quick else DistributedSizes()
        return run_distributed(spread, postgres_url=postgres_url, workdir=workdir)
    if name == "orchestration":
        from ._orchestration import OrchestrationSizes, run_orchestration

        graphs = OrchestrationSizes.quick() if quick else OrchestrationSizes()
        return run_orchestration(graphs, postgres_url=postgres_url, workdir=workdir)
    raise ConfigError(f"unknown benchmark suite {name!r}: choose from {', '.join(SUITES)}")
