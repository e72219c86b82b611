"""Helix: a control plane for autonomous AI agents.

Layers, bottom up; each may import only the ones below it (``tests/test_layers.py``
enforces this, and docs/architecture.md draws it):

1. ``helix.errors`` and ``helix._util``: the exception tree; domain-free helpers.
2. ``helix.kernel``: events, the append-only log and its backends, replay.
3. ``helix.providers``, ``helix.sandbox``, ``helix.world``, ``helix.config``,
   ``helix.notify``, ``helix.ui``: model adapters, the tiers where commands run, the
   run's world, settings, notifications, generative UI component kinds (the kernel only).
4. ``helix.tools``: the tool declaration and the built-in tools (and the sandbox).
5. ``helix.gates``: the ordered gate pipeline (and the tools).
6. ``helix.accounts``: users, workspaces, roles, tokens (the gates' policy ceilings).
7. ``helix.runtime``: the run loop, the engine, run control (everything above but 6).
8. ``helix.testing``: the public test kit (mock model server, conformance suites).
9. ``helix.api``: the one door to runs (``HelixApi``: local or over HTTP) and the SDK,
   ``helix.Client`` and ``helix.AsyncClient`` (the runtime and config below it).
10. ``helix.bench``: benchmark suites.
11. ``helix.server``: ``helix serve``: the API, live streams, the dashboard.
12. ``helix.cli``: the ``helix`` command.

``Client`` and ``AsyncClient`` are imported on first use, so ``import helix`` stays light.
"""

from helix._version import __version__ as __version__

# Not `typing.TYPE_CHECKING`: importing `typing` (and `re` with it) is most of what
# `import helix` would cost. Type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from helix.api import AsyncClient as AsyncClient
    from helix.api import Client as Client
del TYPE_CHECKING

__all__ = ["AsyncClient", "Client", "__version__"]

_LAZY = {"AsyncClient", "Client"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import helix.api

        value = getattr(helix.api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'helix' has no attribute {name!r}")
