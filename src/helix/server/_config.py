"""What a server is told at start: where its data is, and its limits."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from helix.accounts import Hashing
from helix.errors import ConfigError
from helix.kernel.log import Durability
from helix.telemetry import OtelSettings

if TYPE_CHECKING:
    from helix.runtime import Clock, ExecutorKind, RunSetup
    from helix.tools import ToolSource


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
    """Failed sign-ins allowed a minute per client address and per username."""
    forwarded_allow_ips: tuple[str, ...] = ()
    """Proxies whose ``X-Forwarded-For``/``-Proto`` are believed (addresses, networks, or
    ``*``); from anyone else the socket's peer address is the client's. Default: none."""
    scripts: Path | None = None
    """The folder ``scripted:PATH`` models are read from; ``None``: scripted models are refused."""
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
    otel: OtelSettings | None = None
    """Where the server exports every run's trace (OTLP/HTTP, docs/telemetry.md); ``None``: off."""
    workers: int | None = None
    """The ``processes`` executor's worker count; ``None``: the machine's CPU count."""
    sources: Callable[[RunSetup], Sequence[ToolSource]] | None = None
    """Tool sources every run gets beyond its blueprint's (``Engine(sources=…)``: an
    embedding's own tools, a test's); ``None``: none."""
    executor: ExecutorKind = "local"
    """Where runs are driven (docs/distributed.md): ``local``, in the server's process
    (the default here, for embedded use and tests); ``processes``, worker processes of
    this machine (``helix serve``'s default); ``ray``, an actor per run on the cluster
    at ``ray_address``."""
    ray_address: str | None = None
    """The Ray cluster's ``HOST:PORT`` for ``executor="ray"`` (its token:
    ``HELIX_RAY_TOKEN`` in ``env``)."""
    automations: bool = True
    """Fire automations (cron slots, run events) from this server (docs/automations.md);
    webhooks are answered either way."""
    clock: Clock | None = None
    """What time the automation scheduler and webhooks read; ``None``: the system's."""

    @property
    def environment(self) -> dict[str, str]:
        """This process's environment with ``env`` over it (where the Ray token is read)."""
        return {**os.environ, **(self.env or {})}

    @property
    def worlds(self) -> Path:
        """Where the worlds of runs started through the API live, one folder per workspace."""
        return self.home / "worlds"


def parse_forwarded_allow_ips(text: str) -> tuple[str, ...]:
    """``--forwarded-allow-ips``: comma-separated addresses or networks, or ``*``.

    ``ConfigError`` names an entry that is neither (a typo must not silently trust nobody,
    or somebody else).
    """
    entries = tuple(entry.strip() for entry in text.split(",") if entry.strip())
    if entries == ("*",):
        return entries
    for entry in entries:
        try:
            if "/" in entry:
                ipaddress.ip_network(entry)
            else:
                ipaddress.ip_address(entry)
        except ValueError:
            raise ConfigError(
                f"--forwarded-allow-ips: {entry!r} is not an IP address or network"
                " (give addresses like 10.0.0.5 or 10.0.0.0/24, comma-separated, or *)"
            ) from None
    return entries
