"""What a server is told at start: where its data is, and its limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from helix.accounts import Hashing
from helix.kernel.log import Durability


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A server's settings; ``helix serve`` fills them from the environment and options."""

    db_url: str
    """The store (events and accounts): ``sqlite:///PATH`` or ``postgresql://…``."""
    home: Path
    """``HELIX_HOME``: run locks and the worlds of runs started through the API."""
    durability: Durability = "normal"
    public_url: str = "http://127.0.0.1:8420"
    """Where people reach the server (used in the first-start login link)."""
    max_body_bytes: int = 1 << 20
    """Largest request body; larger ones answer 413."""
    max_import_bytes: int = 64 << 20
    """Largest body of ``POST /runs/import`` (an exported log)."""
    access_ttl_s: float = 86400.0
    """Lifetime of the JWT that ``/auth/login`` returns."""
    ws_token_ttl_s: float = 60.0
    """Lifetime of a WebSocket token: it travels in a URL, so it is short."""
    login_attempts_per_minute: int = 5
    hashing: Hashing = field(default_factory=Hashing)
    env: dict[str, str] | None = None
    """The environment runs see (provider keys, base URLs); ``None``: this process's."""
    ws_queue: int = 2048
    """Events a WebSocket client may fall behind by before it is dropped."""
    ws_send_timeout_s: float = 5.0
    """A client that does not take one message in this long is dropped."""
    notify: tuple[str, ...] = ()
    """Apprise URLs told of approvals asked, runs finished or failed, budgets reached."""
    resume_on_start: bool = True
    """Drive every unfinished run when the server starts (the engine's durable resume)."""

    @property
    def worlds(self) -> Path:
        """Where the worlds of runs started through the API live, one folder per workspace."""
        return self.home / "worlds"
