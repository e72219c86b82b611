"""``GET /plugins``: the plugins this server's runs may name, and whether each is active.

Any signed-in caller may read it (a blueprint names plugins by these names); where a
plugin lives on the server's disk is not shown.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

from ._deps import CallerDep, State

router = APIRouter(tags=["plugins"])


class PluginEntry(BaseModel):
    """One plugin as ``helix plugins list`` shows it (docs/plugins.md)."""

    name: str
    version: str | None
    source: str
    """``entry_point`` or ``folder``."""
    status: str
    """``active``, ``inactive``, ``failed`` or ``disabled``."""
    reason: str
    requires: list[str]
    provides: dict[str, list[str]]


class PluginList(BaseModel):
    """Every plugin found on the server."""

    plugins: list[PluginEntry]


@router.get("/plugins", response_model=PluginList)
async def list_plugins(caller: CallerDep, state: State) -> PluginList:
    """The server's plugins: version, source, state (and why not active), what each provides."""
    plugins = state.engine.plugins
    await plugins.refresh()
    return PluginList(
        plugins=[
            PluginEntry(
                name=info.name,
                version=info.version,
                source=info.source,
                status=info.status,
                reason=info.reason,
                requires=list(info.requires),
                provides={k: v for k, v in info.provides.items() if v},
            )
            for info in plugins.listing()
        ]
    )
