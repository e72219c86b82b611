"""Where a new run works: the folder it was given, a fresh one, or its plugins' (a worktree)."""

from __future__ import annotations

from pathlib import Path

from helix.kernel.log import EventStore, new_run_id
from helix.plugins import Plugins, WorldRequest, prepare_world
from helix.world import world_root

from ._blueprint import Blueprint
from ._engine_checks import refuse_own_data
from ._plan import check_task_blueprints


async def choose_world(
    home: Path,
    store: EventStore,
    plugins: Plugins,
    blueprint: Blueprint,
    world: Path | None,
    run_id: str | None,
) -> tuple[Path, str | None]:
    """The run's world (checked: never Helix's own data), and its id if one was chosen.

    No world: a new folder of its own under ``home`` (as a fork gets), not the caller's
    current one. The blueprint's plugins may then give it another (``prepare_world``),
    for which the run's id is chosen here.
    """
    if world is None:
        fresh = new_run_id()
        run_id, world = run_id or fresh, home / "worlds" / fresh
        world.mkdir(parents=True)
    world = world_root(world)  # a folder, never /
    refuse_own_data(home, store, world)
    if blueprint.plugins:
        run_id = run_id or new_run_id()
        request = WorldRequest(run_id, world, home)
        world = world_root(await prepare_world(plugins, blueprint.plugins, request))
        refuse_own_data(home, store, world)
    if blueprint.graph is not None:
        check_task_blueprints(blueprint, world)
    return world, run_id
