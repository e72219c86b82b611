"""``open_executor``: the executor a server (or an embedding) drives its runs with."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from helix.errors import ConfigError
from helix.kernel.log import MemoryEventStore
from helix.runtime import (
    EXECUTOR_KINDS,
    Engine,
    EngineOpener,
    Executor,
    ExecutorKind,
    LocalExecutor,
    ReplyHub,
    Supervisor,
)

from ._processes import ProcessExecutor, default_workers
from ._ray_executor import ray_executor

EXECUTOR_ENV = "HELIX_EXECUTOR"
WORKERS_ENV = "HELIX_WORKERS"


def parse_executor(text: str) -> ExecutorKind:
    """``--executor``/``HELIX_EXECUTOR``: one of the executor kinds; ``ConfigError`` else."""
    wanted = text.strip().lower()
    for kind in EXECUTOR_KINDS:
        if kind == wanted:
            return kind
    choices = ", ".join(EXECUTOR_KINDS)
    raise ConfigError(f"executor {text!r} is not one of {choices}")


def parse_workers(text: str | int | None) -> int:
    """``--workers``/``HELIX_WORKERS``: a count from 1 to 256; empty or ``None``: the CPUs."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return default_workers()
    try:
        count = int(text)
    except ValueError:
        raise ConfigError(f"workers {text!r} is not a whole number") from None
    if not 1 <= count <= 256:
        raise ConfigError(f"workers must be between 1 and 256, not {count}")
    return count


@asynccontextmanager
async def open_executor(
    kind: str,
    *,
    engine: Engine,
    supervisor: Supervisor,
    opener: EngineOpener | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
    env: Mapping[str, str] | None = None,
    replies: ReplyHub | None = None,
) -> AsyncIterator[Executor]:
    """The executor of this kind, started; closed (its runs stopped, not ended) after.

    ``local``: ``LocalExecutor(engine, supervisor)``, runs driven in this process.
    ``processes``: ``workers`` worker processes (default: the CPU count), each with an
    engine from ``opener`` (required: it is sent to them); their engines must share a
    store with ``engine`` that other processes can open (SQLite file, PostgreSQL).
    ``ray``: an actor per run on the cluster at ``ray_address`` (``HOST:PORT``; its
    token ``HELIX_RAY_TOKEN`` in ``env``), each opening its engine with ``opener``.
    ``replies``: where the workers' runs stream their replies while a view watches
    them (the ``local`` executor's runs stream through ``engine.deltas``; Ray actors'
    do not stream).
    ``ConfigError`` for an unknown kind, a missing opener, or workers that cannot start.
    """
    kind = parse_executor(kind)
    if kind == "local":
        executor = LocalExecutor(engine, supervisor)
        try:
            yield executor
        finally:
            await executor.close()
        return
    if kind == "processes":
        if opener is None:
            raise ConfigError("the processes executor needs an engine opener for its workers")
        if isinstance(engine.store, MemoryEventStore):
            raise ConfigError(
                "the processes executor needs a store other processes can open"
                " (a SQLite file or PostgreSQL), not memory://"
            )
        count = workers if workers is not None else default_workers()
        processes = ProcessExecutor(opener, count, replies=replies)
        await processes.start()
        try:
            yield processes
        finally:
            await processes.close()
        return
    if opener is None:
        raise ConfigError("the ray executor needs an engine opener for its actors")
    cluster = ray_executor(ray_address or "", opener, supervisor, env=env or {})
    try:
        yield cluster
    finally:
        await cluster.close()
