"""Which plugins a person turned off (``helix plugins disable``), kept under HELIX_HOME.

One small JSON file, ``HELIX_HOME/plugins.json`` (``{"disabled": ["acme.search"]}``),
written whole to a temporary file and renamed over the old one, so a reader never
sees half of it. A disabled plugin is not loaded at all: its code does not run.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from helix.errors import PluginError

FILE = "plugins.json"


def disabled_plugins(home: Path) -> frozenset[str]:
    """The names turned off in ``home`` (none when the file does not exist)."""
    path = home / FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError) as error:
        raise PluginError(f"{path}: cannot read the plugin switches: {error}") from None
    names = data.get("disabled") if isinstance(data, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise PluginError(f'{path}: expected {{"disabled": [names]}}')
    return frozenset(names)


def set_disabled(home: Path, name: str, disabled: bool) -> bool:
    """Turn ``name`` off (or on again); whether that changed anything."""
    names = set(disabled_plugins(home))
    if (name in names) == disabled:
        return False
    names = names | {name} if disabled else names - {name}
    home.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"disabled": sorted(names)}, indent=2) + "\n"
    handle, temporary = tempfile.mkstemp(dir=home, prefix=".plugins.", suffix=".json")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, home / FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return True
