"""Settings read from the environment: where Helix keeps its data, and how durably."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from helix.errors import ConfigError

if TYPE_CHECKING:  # the kernel's log is imported when settings are read, not at import
    from helix.kernel.log import Durability

_DURABILITIES = ("normal", "full")


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the store is, how durable its commits are, and whom to notify."""

    home: Path
    """``HELIX_HOME``: Helix's data directory (default ``~/.local/share/helix``)."""
    db_url: str
    """``HELIX_DB``: the store URL (default: ``helix.db`` in the data directory)."""
    durability: Durability
    """``HELIX_DURABILITY``: ``normal`` (survives a process crash) or ``full`` (fsync)."""
    notify: tuple[str, ...] = ()
    """``HELIX_NOTIFY``: Apprise URLs (space-separated) told what a run needs from a person."""
    public_url: str | None = None
    """``HELIX_PUBLIC_URL``: where people reach the server on this store (for its links)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read and check the settings; ``ConfigError`` names the variable at fault."""
        from helix.kernel.log import parse_store_url

        env = os.environ if env is None else env
        home = Path(env.get("HELIX_HOME") or Path.home() / ".local" / "share" / "helix")
        db_url = env.get("HELIX_DB") or f"sqlite:///{home / 'helix.db'}"
        try:
            parse_store_url(db_url)
        except ConfigError as error:
            raise ConfigError(f"HELIX_DB: {error}") from None
        durability = env.get("HELIX_DURABILITY") or "normal"
        if durability not in _DURABILITIES:
            raise ConfigError(
                f"HELIX_DURABILITY: {durability!r} is not one of {', '.join(_DURABILITIES)}"
            )
        public_url = (env.get("HELIX_PUBLIC_URL") or "").strip().rstrip("/") or None
        if public_url is not None and not public_url.startswith(("http://", "https://")):
            raise ConfigError(f"HELIX_PUBLIC_URL: {public_url!r} is not an http(s) URL")
        return cls(
            home=home,
            db_url=db_url,
            durability=cast("Durability", durability),
            notify=tuple(env.get("HELIX_NOTIFY", "").split()),
            public_url=public_url,
        )
