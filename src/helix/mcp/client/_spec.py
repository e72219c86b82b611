"""Declaring an MCP server a run may use: what to start or reach, what to offer, what it does.

```yaml
mcp:
  - name: time
    command: python3
    args: [-m, mcp_server_time]
    tools: [get_current_time]          # allowlist (globs); omitted: every tool
  - name: tracker
    url: https://mcp.example.com/mcp
    headers: {Authorization: TRACKER_AUTH}   # header -> a variable of the engine's env
    deny: ["delete_*"]
    overrides: {create_issue: {effect: external, idempotent: false}}
```

Secrets are named, never written: ``env`` and ``headers`` map what the server gets to
the name of a variable in the engine's environment, whose value is read when the
server starts and never logged.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import re
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from helix.errors import ConfigError
from helix.tools import EffectKind

SERVER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,22}[A-Za-z0-9])?$")
"""A server's name: letters, digits and inner dashes, at most 24 characters (its tools
are named ``SERVER__TOOL`` within the 64 characters every provider accepts)."""
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class McpToolOverride(_Strict):
    """What the operator says one of a server's tools does; it wins over the server's hints."""

    read_only: bool | None = None
    """It only reads (then its effect is ``none`` unless ``effect`` says otherwise)."""
    effect: EffectKind | None = None
    """What it changes: ``none`` lets it run without asking (see docs/mcp.md)."""
    idempotent: bool | None = None
    """Running it twice is running it once: safe to run again after a crash."""


class McpServerSpec(_Strict):
    """One MCP server of a blueprint (``mcp:``): stdio (``command``) or HTTP (``url``)."""

    name: str = Field(pattern=SERVER_NAME.pattern)
    command: str | None = None
    """The program of a stdio server; it runs in the run's sandbox, in its world."""
    args: tuple[str, ...] = ()
    cwd: str | None = None
    """Where a stdio server starts, relative to the world (default: the world)."""
    mounts: tuple[str, ...] = ()
    """Host folders a stdio server needs (its installation), shown to it read-only
    where the sandbox hides the host (``bwrap``); Helix's data and credentials stay
    masked inside them."""
    url: str | None = None
    """The endpoint of a streamable HTTP server; reached only if the run's egress
    policy (``sandbox.network``) allows its host."""
    env: dict[str, str] = Field(default_factory=dict[str, str])
    """Variables of a stdio server: ``VAR: NAME`` gives it ``VAR`` with the value of
    the engine's ``NAME`` (the only variables it gets besides a minimal ``PATH``…)."""
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    """Headers of an HTTP server's requests: ``Header: NAME`` as for ``env``."""
    tools: tuple[str, ...] | None = None
    """The server's tools the run offers (names or globs); ``None``: all of them."""
    deny: tuple[str, ...] = ()
    """The server's tools never offered (names or globs); they win over ``tools``."""
    overrides: dict[str, McpToolOverride] = Field(default_factory=dict[str, McpToolOverride])
    """Per tool (its name on the server, or a glob): what it does, over its hints."""
    max_restarts: int = Field(default=3, ge=0, le=100)
    """Times a server that died is started again within one run's incarnation."""
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """How long starting the server, or one call, may take."""

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"mcp server {self.name!r}: give either command (stdio) or url (http)")
        if self.url is not None and (self.args or self.env or self.cwd or self.mounts):
            raise ValueError(
                f"mcp server {self.name!r}: args, cwd, env and mounts are for stdio servers"
            )
        if self.command is not None and self.headers:
            raise ValueError(f"mcp server {self.name!r}: headers are for http servers")
        for variable, secret in self.env.items():
            if not _VARIABLE.match(variable) or not _VARIABLE.match(secret):
                raise ValueError(
                    f"mcp server {self.name!r}: env maps a variable name to the name of a"
                    f" variable of the engine's environment ({variable!r}: {secret!r})"
                )
        for header, secret in self.headers.items():
            if not _HEADER.match(header) or not _VARIABLE.match(secret):
                raise ValueError(
                    f"mcp server {self.name!r}: headers map a header name to the name of a"
                    f" variable of the engine's environment ({header!r}: {secret!r})"
                )
        for mount in self.mounts:
            if not mount.startswith("/") or mount.rstrip("/") == "" or ".." in mount.split("/"):
                raise ValueError(
                    f"mcp server {self.name!r}: a mount is an absolute host folder other than"
                    f" / ({mount!r})"
                )
        if self.cwd is not None and (self.cwd.startswith("/") or ".." in self.cwd.split("/")):
            raise ValueError(f"mcp server {self.name!r}: cwd is a folder inside the world")
        return self

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def offers(self, tool: str) -> bool:
        """Whether the server's tool ``tool`` is offered (allowlist, then denylist)."""
        if any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.deny):
            return False
        return self.tools is None or any(fnmatch.fnmatchcase(tool, p) for p in self.tools)

    def override(self, tool: str) -> McpToolOverride:
        """The operator's override for ``tool``: its own entry, else the first glob matching."""
        if tool in self.overrides:
            return self.overrides[tool]
        for pattern, override in self.overrides.items():
            if fnmatch.fnmatchcase(tool, pattern):
                return override
        return McpToolOverride()


def require_sdk() -> None:
    """``ConfigError`` unless the ``mcp`` SDK is installed (the ``helix-harness[mcp]`` extra)."""
    if importlib.util.find_spec("mcp") is None:
        raise ConfigError(
            "this blueprint declares MCP servers, but the mcp SDK is not installed:"
            " pip install 'helix-harness[mcp]'"
        )
