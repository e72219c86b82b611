"""The plugins of this process: found, loaded, checked, activated, and kept current.

``Plugins.discover`` lists what is findable (``_load``); the first ``refresh`` loads
every plugin that is not disabled, checks its contract, and activates those whose
needs are met (``_graph``). Later refreshes (a watcher calls them while a run uses a
folder plugin) look at the folders again: a folder whose files changed is loaded as a
new version, a new folder is loaded, a removed one goes; each change restarts only
the plugins that depend on it, and is told to every subscriber (a run's
``PluginSource``) as a ``PluginChange``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from types import ModuleType

from helix._util import redact, secret_values
from helix.errors import PluginError

from ._contract import check_plugin
from ._declare import Plugin, PluginComponent
from ._graph import Graph, Slot, Status
from ._info import ChangeKind, Listener, PluginChange, PluginInfo
from ._load import (
    Candidate,
    content_hash,
    discover,
    forget,
    load_entry_point,
    load_folder,
    stat_signature,
)
from ._switches import disabled_plugins

_log = logging.getLogger(__name__)


@dataclass
class _Loaded:
    candidate: Candidate
    version: str | None = None
    digest: str | None = None
    module: ModuleType | None = None
    signature: tuple[tuple[str, int, int], ...] = ()
    problem: str = ""
    """The last load that failed while an earlier version keeps serving."""


@dataclass
class _Scan:
    candidates: list[Candidate]
    digests: dict[str, str]
    """Folder plugin → the hash of its files, for the folders that changed (or are new)."""
    signatures: dict[str, tuple[tuple[str, int, int], ...]]
    disabled: frozenset[str]


class Plugins:
    """The plugins of this process (see the module's documentation)."""

    def __init__(
        self,
        *,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
        helix_version: str | None = None,
        poll_s: float = 0.2,
    ) -> None:
        """Find plugins through ``env`` and ``home``; nothing is loaded before ``refresh``.

        ``env``'s ``HELIX_PLUGINS`` lists plugin folders; ``home`` holds the switches
        (``plugins.json``) and a ``plugins/`` folder of its own.
        """
        self.home = home
        self.env = dict(env or {})
        self.helix_version = helix_version or _installed_helix()
        self.poll_s = poll_s
        """How often the watcher looks at folder plugins while a run uses one."""
        self._loaded: dict[str, _Loaded] = {}
        self._graph = Graph()
        self._listeners: list[Listener] = []
        self._ready = False
        self._holds = 0
        self._watcher: asyncio.Task[None] | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    # -- reading ----------------------------------------------------------------------

    def listing(self) -> list[PluginInfo]:
        """Every plugin found, in discovery order (``refresh`` first to load them)."""
        return [self.info(name) for name in self._loaded]

    def found(self) -> list[str]:
        """The names of every plugin findable here, loaded or not (no plugin code runs)."""
        return list(dict.fromkeys(c.name for c in discover(self.env, self.home)))

    def info(self, name: str) -> PluginInfo:
        """One plugin; ``PluginError`` if none of that name was found."""
        loaded = self._loaded.get(name)
        if loaded is None:
            raise PluginError(f"unknown plugin {name!r}; {self._known()}")
        slot = self._graph.slots[name]
        plugin = slot.plugin
        return PluginInfo(
            name=name,
            version=loaded.version,
            source=loaded.candidate.source,
            location=loaded.candidate.location,
            status=slot.status,
            reason=self._said(slot.reason or loaded.problem),
            requires=plugin.requires if plugin is not None else (),
            provides=plugin.summary() if plugin is not None else {},
        )

    def serving(self, name: str) -> tuple[Plugin, str]:
        """The active version of ``name`` and its version string; ``PluginError`` says why not."""
        info = self.info(name)
        if info.status != "active" or info.version is None:
            raise PluginError(f"plugin {name} is {info.status}: {info.reason}")
        plugin, _ = self._graph.running[name]
        return plugin, info.version

    def require(self, names: Sequence[str]) -> None:
        """``PluginError`` naming the first of ``names`` a run could not have now."""
        for name in names:
            self.serving(name)

    def components(self) -> list[PluginComponent]:
        """The UI component kinds the active plugins add."""
        return [c for plugin, _ in self._graph.running.values() for c in plugin.components]

    def _said(self, text: str) -> str:
        """``text`` (a plugin's error, which its code wrote) with every secret masked."""
        return redact(text, secret_values(self.env))

    def _known(self) -> str:
        if not self._loaded:
            return "no plugins are installed (docs/plugins.md)"
        return "known plugins are " + ", ".join(self._loaded)

    # -- changing ---------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with each change from now on; returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def refresh(self) -> list[PluginChange]:
        """Load what is new or changed (everything, the first time) and settle the graph."""
        async with self._refreshing():  # one at a time: a stale look never undoes a newer one
            scan = await asyncio.to_thread(self._scan)
            return self._update(scan)

    def _refreshing(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    def refresh_now(self) -> list[PluginChange]:
        """``refresh`` without an event loop (the CLI's listing)."""
        return self._update(self._scan())

    def _scan(self) -> _Scan:
        candidates = discover(self.env, self.home)
        disabled = disabled_plugins(self.home) if self.home is not None else frozenset()
        digests: dict[str, str] = {}
        signatures: dict[str, tuple[tuple[str, int, int], ...]] = {}
        for candidate in candidates:
            if candidate.source != "folder" or candidate.name in disabled:
                continue
            signature = stat_signature(Path(candidate.location))
            signatures[candidate.name] = signature
            known = self._loaded.get(candidate.name)
            if known is None or known.candidate != candidate or known.signature != signature:
                digests[candidate.name] = content_hash(Path(candidate.location))
        return _Scan(candidates, digests, signatures, disabled)

    def _update(self, scan: _Scan) -> list[PluginChange]:
        before = {n: (s.status, self._loaded[n].version) for n, s in self._graph.slots.items()}
        changed: dict[str, str] = {}
        failures: list[PluginChange] = []
        seen: set[str] = set()
        for candidate in scan.candidates:
            if candidate.name in seen:
                continue  # the first found keeps the name (entry points come first)
            seen.add(candidate.name)
            reason = self._consider(candidate, scan, failures)
            if reason is not None:
                changed[candidate.name] = reason
        for name in [n for n in self._loaded if n not in seen]:
            changed[name] = "removed"
            self._drop(name)
        if not self._ready:
            changed.update({n: "loaded" for n in self._loaded})
            self._ready = True
        touched = self._graph.settle(changed)
        changes = [
            replace(c, reason=self._said(c.reason))
            for c in [*failures, *self._changes(before, changed, touched)]
        ]
        for change in changes:
            for listener in list(self._listeners):
                listener(change)
        return changes

    def _consider(
        self, candidate: Candidate, scan: _Scan, failures: list[PluginChange]
    ) -> str | None:
        """Load ``candidate`` if it is new or its files changed; why it changed, or ``None``."""
        known = self._loaded.get(candidate.name)
        if candidate.name in scan.disabled:
            if known is not None and self._graph.slots[candidate.name].status == "disabled":
                return None
            self._drop(candidate.name)
            self._loaded[candidate.name] = _Loaded(candidate)
            self._graph.slots[candidate.name] = Slot(candidate.name, None, "disabled", "disabled")
            return "disabled"
        if candidate.source == "entry_point":
            if known is not None and known.candidate == candidate:
                return None
            return self._install(candidate, *self._load_entry_point(candidate))
        digest = scan.digests.get(candidate.name)
        if digest is None:
            return None
        if known is not None and known.candidate == candidate and known.digest == digest:
            known.signature = scan.signatures[candidate.name]  # touched, not changed
            return None
        try:
            found, module = load_folder(candidate, digest)
            plugin = check_plugin(found, expected=candidate.name, helix_version=self.helix_version)
        except PluginError as error:
            if known is not None and known.version is not None and known.candidate == candidate:
                known.problem = f"the edit did not load: {error}"  # the old version serves
                known.signature = scan.signatures[candidate.name]
                known.digest = digest
                failures.append(
                    PluginChange(candidate.name, "failed", known.version, None, str(error))
                )
                return None
            failed = self._fail(candidate, str(error))
            self._loaded[candidate.name].digest = digest  # not tried again until it changes
            self._loaded[candidate.name].signature = scan.signatures[candidate.name]
            return failed
        if known is not None and known.module is not None:
            forget(known.module)
        version = f"{plugin.version}+{digest}"
        self._drop_slot(candidate.name)
        self._loaded[candidate.name] = _Loaded(
            candidate, version, digest, module, scan.signatures[candidate.name]
        )
        self._graph.slots[candidate.name] = Slot(candidate.name, plugin, "inactive", "loading")
        return "files changed" if known is not None and known.version is not None else "loaded"

    def _load_entry_point(self, candidate: Candidate) -> tuple[Plugin | None, str, str]:
        try:
            found, path = load_entry_point(candidate)
            plugin = check_plugin(found, expected=candidate.name, helix_version=self.helix_version)
            digest = content_hash(path) if path is not None else "0"
        except PluginError as error:
            return None, "", str(error)
        except OSError as error:
            return None, "", f"plugin {candidate.name}: cannot read its files: {error}"
        return plugin, digest, ""

    def _install(self, candidate: Candidate, plugin: Plugin | None, digest: str, error: str) -> str:
        if plugin is None:
            return self._fail(candidate, error)
        self._drop_slot(candidate.name)
        self._loaded[candidate.name] = _Loaded(candidate, f"{plugin.version}+{digest}", digest)
        self._graph.slots[candidate.name] = Slot(candidate.name, plugin, "inactive", "loading")
        return "loaded"

    def _fail(self, candidate: Candidate, error: str) -> str:
        self._drop(candidate.name)
        self._loaded[candidate.name] = _Loaded(candidate)
        self._graph.slots[candidate.name] = Slot(candidate.name, None, "failed", error)
        return "failed"

    def _drop(self, name: str) -> None:
        known = self._loaded.pop(name, None)
        if known is not None and known.module is not None:
            forget(known.module)
        self._drop_slot(name)

    def _drop_slot(self, name: str) -> None:
        self._graph.slots.pop(name, None)

    def _changes(
        self,
        before: Mapping[str, tuple[Status, str | None]],
        changed: Mapping[str, str],
        touched: set[str],
    ) -> list[PluginChange]:
        """What each plugin stopped, started or restarted went through (in name order)."""
        out: list[PluginChange] = []
        for name in sorted(touched | set(changed)):
            status, previous = before.get(name, ("inactive", None))
            slot = self._graph.slots.get(name)
            now = slot.status if slot is not None else "inactive"
            version = self._loaded[name].version if name in self._loaded else None
            active_before, active_now = status == "active", now == "active"
            if active_before and active_now:
                if name not in touched:
                    continue
                why = changed.get(name) or "a capability it requires changed"
                kind: ChangeKind = "reloaded" if version != previous else "restarted"
                out.append(PluginChange(name, kind, version, previous, why))
            elif active_now:
                why = changed.get(name, "what it requires is provided")
                out.append(PluginChange(name, "activated", version, previous, why))
            elif active_before:
                reason = slot.reason if slot is not None else "removed"
                out.append(PluginChange(name, "deactivated", None, previous, reason))
        return out

    # -- watching ---------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Keep folder plugins current while inside (a run using a plugin holds this)."""
        self._holds += 1
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0 and self._watcher is not None:
                watcher, self._watcher = self._watcher, None
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            try:
                await self.refresh()
            except Exception:  # a bad folder must not stop the watching of the others
                _log.exception("looking at the plugin folders failed")


def _installed_helix() -> str:
    try:
        return metadata.version("helix-harness")
    except metadata.PackageNotFoundError:
        return "0"
