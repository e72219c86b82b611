"""The plugins' say on a run's world before the run exists (``Plugin.prepare_world``).

``Engine.create`` calls ``prepare_world`` for a blueprint naming plugins: each named
plugin with a hook, in the blueprint's order, is given the run's id, its world (as the
previous hook left it) and Helix's home, and may answer another folder for the world
(the engineering pack answers a git worktree on a branch of the run's own). A hook
that raises stops the run's creation with a ``PluginError`` naming the plugin; nothing
is created.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from helix.errors import HelixError, PluginError

from ._declare import WorldRequest
from ._registry import Plugins


async def prepare_world(plugins: Plugins, names: Sequence[str], request: WorldRequest) -> Path:
    """The world the run gets once every named plugin's hook had its say (see above)."""
    world = request.world
    for name in names:
        plugin, _ = plugins.serving(name)
        hook = plugin.prepare_world
        if hook is None:
            continue
        asked = WorldRequest(request.run_id, world, request.home)
        try:
            answer = await hook(asked)
        except HelixError as error:
            raise PluginError(f"plugin {name}: could not prepare the world: {error}") from error
        except Exception as error:  # a plugin's bug refuses the run, never crashes the door
            raise PluginError(
                f"plugin {name}: could not prepare the world: {type(error).__name__}: {error}"
            ) from error
        if answer is None:
            continue
        if not isinstance(answer, Path) or not answer.is_absolute() or not answer.is_dir():
            raise PluginError(f"plugin {name}: prepare_world answered {answer!r}, not a folder")
        world = answer.resolve()
    return world
