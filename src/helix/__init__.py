"""Helix: a control plane for autonomous AI agents.

Layers, bottom up; each may import only the ones before it (``tests/test_layers.py``
enforces this):

1. ``helix.errors``: the exception tree.
2. ``helix.kernel``: events, the append-only log and its backends, replay.
3. ``helix.providers``: model adapters at the edge (imports only the kernel).
4. ``helix.testing``: the public test kit (mock model server, conformance suites).
5. ``helix.bench``: benchmark suites.
6. ``helix.config``: settings from the environment.
7. ``helix.cli``: the ``helix`` command.
"""

from helix._version import __version__ as __version__

__all__ = ["__version__"]
