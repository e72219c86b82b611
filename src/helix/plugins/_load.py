"""Finding plugins and loading one version of one: entry points and development folders.

Installed plugins are entry points in the ``helix.plugins`` group (``name =
"package.module:plugin"``). Development plugins are folders: each path in
``HELIX_PLUGINS`` (separated like ``PATH``) and ``HELIX_HOME/plugins`` is a plugin
folder (holding ``plugin.py``, or ``__init__.py``) or a folder of them. A folder's
name is its plugin's name.

Each version of a folder plugin is loaded as a fresh module under a name of its own
(``helix_plugin_<name>_<hash>_<n>``), never ``importlib.reload``: the objects a run in
flight holds keep running the code they came from, and the new version serves from
the next turn.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Literal

from helix.errors import PluginError

_loads = itertools.count(1)
"""Numbers each load, so two loads of the same files are two modules, never one."""

GROUP = "helix.plugins"
"""The entry point group installed plugins declare."""
ENTRY_FILES = ("plugin.py", "__init__.py")
"""What makes a folder a plugin: the module holding its ``plugin``."""

SourceKind = Literal["entry_point", "folder"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A plugin found but not loaded yet."""

    name: str
    """The entry point's or the folder's name (the plugin must declare the same)."""
    source: SourceKind
    location: str
    """``module:attribute`` for an entry point, the folder's path for a folder."""


def discover(env: Mapping[str, str], home: Path | None) -> list[Candidate]:
    """Every plugin findable here: entry points first, then folders, in a stable order."""
    found = [
        Candidate(ep.name, "entry_point", ep.value)
        for ep in sorted(metadata.entry_points(group=GROUP), key=lambda ep: ep.name)
    ]
    roots = [Path(p).expanduser() for p in env.get("HELIX_PLUGINS", "").split(os.pathsep) if p]
    if home is not None:
        roots.append(home / "plugins")
    for root in roots:
        found += [Candidate(f.name, "folder", str(f)) for f in _folders(root)]
    return found


def _folders(root: Path) -> Iterator[Path]:
    if _is_plugin(root):
        yield root.resolve()
        return
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if not child.name.startswith((".", "_")) and _is_plugin(child):
            yield child.resolve()


def _is_plugin(folder: Path) -> bool:
    return folder.is_dir() and any((folder / f).is_file() for f in ENTRY_FILES)


def content_hash(root: Path) -> str:
    """A short hash of a plugin's Python files and data (its folder, or its module's)."""
    digest = hashlib.sha256()
    files = [root] if root.is_file() else sorted(_files(root))
    for path in files:
        digest.update(str(path.relative_to(root) if root.is_dir() else path.name).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:8]


def stat_signature(root: Path) -> tuple[tuple[str, int, int], ...]:
    """What changes when a file of the folder does (cheap: no file is read)."""
    entries: list[tuple[str, int, int]] = []
    for path in sorted(_files(root)):
        try:
            stat = path.stat()
        except OSError:
            continue  # removed while we looked: the next look sees it gone
        entries.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in names:
            if not name.endswith((".pyc", ".pyo")) and not name.startswith("."):
                yield Path(folder) / name


def load_folder(candidate: Candidate, digest: str) -> tuple[object, ModuleType]:
    """The ``plugin`` object of the folder's current files, from a module of their own.

    ``PluginError`` (naming the plugin) when the code does not import or has no
    ``plugin``; the error's text, not its traceback, is what a listing shows.
    """
    folder = Path(candidate.location)
    entry = next((folder / f for f in ENTRY_FILES if (folder / f).is_file()), None)
    if entry is None:
        raise PluginError(f"plugin {candidate.name}: {folder} has no plugin.py or __init__.py")
    module_name = f"helix_plugin_{_safe(candidate.name)}_{digest}_{next(_loads)}"
    package = entry.name == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        module_name, entry, submodule_search_locations=[str(folder)] if package else None
    )
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {candidate.name}: {entry} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # its own relative imports find it
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        forget(module)
        if not isinstance(error, Exception | SystemExit):  # Ctrl-C stays Ctrl-C
            raise
        raise PluginError(
            f"plugin {candidate.name}: does not import: {type(error).__name__}: {error}"
        ) from None
    if not hasattr(module, "plugin"):
        forget(module)
        raise PluginError(f"plugin {candidate.name}: {entry.name} defines no `plugin`")
    return module.plugin, module


def forget(module: ModuleType) -> None:
    """Drop a version's modules from ``sys.modules`` (objects in use keep working)."""
    prefix = module.__name__ + "."
    for name in [n for n in sys.modules if n == module.__name__ or n.startswith(prefix)]:
        del sys.modules[name]


def load_entry_point(candidate: Candidate) -> tuple[object, Path | None]:
    """The entry point's object (a ``Plugin``, or a module holding ``plugin``) and its files."""
    installed = metadata.entry_points(group=GROUP, name=candidate.name)
    entry = next((ep for ep in installed if ep.value == candidate.location), None)
    if entry is None:
        raise PluginError(f"plugin {candidate.name}: its entry point is no longer installed")
    try:
        found = entry.load()
    except (Exception, SystemExit) as error:
        raise PluginError(
            f"plugin {candidate.name}: does not import: {type(error).__name__}: {error}"
        ) from None
    if isinstance(found, ModuleType):
        found = getattr(found, "plugin", found)
    module = sys.modules.get(entry.module)
    path = Path(module.__file__) if module is not None and module.__file__ else None
    if path is not None and path.name == "__init__.py":
        path = path.parent
    return found, path


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
