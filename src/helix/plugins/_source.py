"""A plugin as one run's tool source: its tools and gates, switched at turn boundaries.

The run's loop opens a ``PluginSource`` for each plugin its blueprint names. The
source offers the version serving now, each tool stamped with it
(``origin="plugin:NAME@VERSION"``, which the call's ``tool.started`` records), and logs
``plugin.loaded``. When the plugin changes (its folder was edited, or something it
requires was swapped) the source logs ``plugin.reloaded`` and tells the run, which
takes the new tools and gates at its next turn boundary: a call in flight finishes on
the code it started with. An edit that does not load logs ``plugin.failed`` and the
previous version keeps serving; a plugin that becomes inactive serves no tools from
the next turn on.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from helix.errors import PluginError, ToolSourceError
from helix.kernel.events import Payload, PluginFailed, PluginLoaded, PluginReloaded
from helix.tools import SourceHost, ToolDef

from ._declare import Plugin
from ._info import PluginChange
from ._registry import Plugins


class PluginSource:
    """One plugin, opened for one run (``helix.tools.ToolSource``)."""

    def __init__(self, plugins: Plugins, plugin: str) -> None:
        """Serve ``plugin`` (a name) of ``plugins`` to the run that opens this."""
        self.plugins = plugins
        self.plugin = plugin
        self._serving: tuple[Plugin, str] | None = None
        self._tools: list[ToolDef] = []
        self._host: SourceHost | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._watch: Any = None
        self._writes: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str:
        """``plugin:NAME``."""
        return f"plugin:{self.plugin}"

    @property
    def version(self) -> str | None:
        """The version serving the run now (``None``: none)."""
        return self._serving[1] if self._serving is not None else None

    async def open(self, host: SourceHost) -> None:
        """Take the plugin's current version (after a look at its files) and log it."""
        await self.plugins.refresh()
        try:
            plugin, version = self.plugins.serving(self.plugin)
        except PluginError as error:
            await host.record(PluginFailed(name=self.plugin, error=str(error)))
            raise ToolSourceError(str(error)) from None
        self._host = host
        self._serve(plugin, version)
        self._unsubscribe = self.plugins.subscribe(self._changed)
        self._watch = self.plugins.watching()
        await self._watch.__aenter__()
        await host.record(PluginLoaded(name=self.plugin, version=version, **self._contents(plugin)))

    def tools(self) -> Sequence[ToolDef]:
        """The serving version's tools, each stamped with its origin."""
        return self._tools

    def gates(self) -> Sequence[Any]:
        """The serving version's gates (``helix.gates.Gate``s)."""
        return self._serving[0].gates if self._serving is not None else ()

    async def close(self) -> None:
        """Stop listening and watching; wait for the events being written."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._watch is not None:
            watch, self._watch = self._watch, None
            await watch.__aexit__(None, None, None)
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    def _serve(self, plugin: Plugin, version: str) -> None:
        self._serving = (plugin, version)
        origin = f"plugin:{self.plugin}@{version}"
        self._tools = [dataclasses.replace(t, origin=origin) for t in plugin.tools]

    def _contents(self, plugin: Plugin) -> dict[str, Any]:
        summary = plugin.summary()
        return {
            "source": self.plugins.info(self.plugin).source,
            "tools": summary["tools"],
            "gates": summary["gates"],
            "components": summary["components"],
        }

    def _changed(self, change: PluginChange) -> None:
        """A change of the plugins: if it is ours, log it and tell the run."""
        if change.name != self.plugin or self._host is None:
            return
        previous = self.version
        payload: Payload
        if change.kind == "failed":
            payload = PluginFailed(name=self.plugin, error=change.reason, serving=previous)
            self._record(payload)
            return  # the serving version stays: nothing changes for the run
        if change.kind == "deactivated":
            self._serving, self._tools = None, []
            payload = PluginFailed(name=self.plugin, error=change.reason, serving=None)
        else:
            plugin, version = self.plugins.serving(self.plugin)
            self._serve(plugin, version)
            summary = self._contents(plugin)
            del summary["source"]
            payload = PluginReloaded(
                name=self.plugin,
                version=version,
                previous=previous or "none",
                reason=change.reason,
                **summary,
            )
        self._record(payload)
        self._host.changed(self.name)

    def _record(self, payload: Payload) -> None:
        host = self._host
        assert host is not None

        async def write() -> None:
            await host.record(payload)

        task = asyncio.get_running_loop().create_task(write())
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
