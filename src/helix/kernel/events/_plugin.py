"""Events of plugins: which version of a plugin a run has, and when that changed.

A run that uses a plugin logs ``plugin.loaded`` when its loop opens it, then
``plugin.reloaded`` each time a new version (or a restart, when something it needs
changed) takes over, and ``plugin.failed`` when the plugin can no longer serve it (a
broken edit: the previous version keeps serving; or a need that went away). Which
version served each call is the ``origin`` of its ``tool.started``
(``plugin:NAME@VERSION``).
"""

from __future__ import annotations

from typing import ClassVar

from ._payload import Payload


class PluginLoaded(Payload):
    """The run opened a plugin: its version and what it contributes to the run."""

    TYPE: ClassVar[str] = "plugin.loaded"

    name: str
    version: str
    """The declared version and a short hash of the plugin's files (``1.2.0+3f9a0c1b``)."""
    source: str
    """``entry_point`` (an installed package) or ``folder`` (a development folder)."""
    tools: list[str]
    gates: list[str]
    components: list[str]


class PluginReloaded(Payload):
    """A new version of a plugin (or the same one, restarted) serves the run from its next turn."""

    TYPE: ClassVar[str] = "plugin.reloaded"

    name: str
    version: str
    previous: str
    reason: str
    """Why: ``files changed``, or which capability it needs changed."""
    tools: list[str]
    gates: list[str]
    components: list[str]


class PluginFailed(Payload):
    """A plugin could not serve the run as asked (a broken edit, a need that went away)."""

    TYPE: ClassVar[str] = "plugin.failed"

    name: str
    error: str
    """Which plugin, which capability, what is wrong."""
    serving: str | None = None
    """The version that keeps serving the run, if any (``None``: its tools are gone from
    the next turn on)."""
