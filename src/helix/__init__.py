"""Helix: a control plane for autonomous AI agents.

Layers, bottom up; each may import only the ones before it (``tests/test_layers.py``
enforces this):

1. ``helix.errors``: the exception tree.
2. ``helix.kernel``: events, the append-only log and its backends, replay.
3. ``helix.bench`` and ``helix.testing``: benchmarks and the public test kit.
4. ``helix.config``: settings from the environment.
5. ``helix.cli``: the ``helix`` command.
"""

from helix._version import __version__ as __version__

__all__ = ["__version__"]
