"""``HttpApi``'s stored-blueprint operations: ``/workspaces/{workspace}/blueprints``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ._blueprint_models import BlueprintDiff, BlueprintInfo, BlueprintVersion

if TYPE_CHECKING:
    from helix.runtime import Blueprint


def _segment(text: str) -> str:
    return quote(text, safe="")


class HttpBlueprints:
    """``HttpApi``'s stored-blueprint operations (a mixin over its ``_json``)."""

    if TYPE_CHECKING:

        async def _json(self, method: str, path: str, **kwargs: Any) -> Any: ...

    _own_workspace: str | None = None

    async def _blueprints_at(self, workspace: str | None, name: str | None = None) -> str:
        """``/workspaces/W/blueprints[/NAME]``.

        No workspace: the caller's own, as the server starts runs (their personal one,
        else the first they may act in).
        """
        if workspace is None:
            if self._own_workspace is None:
                me = await self._json("GET", "/me")
                roles: dict[str, str] = me["workspaces"]
                acting = sorted(w for w, r in roles.items() if r != "viewer")
                own = roles.get(str(me["user"])) == "owner"
                self._own_workspace = str(me["user"]) if own else (acting or sorted(roles))[0]
            workspace = self._own_workspace
        path = f"/workspaces/{_segment(workspace)}/blueprints"
        return path if name is None else f"{path}/{_segment(name)}"

    async def blueprints(self, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """The workspace's stored blueprints (``GET …/blueprints``)."""
        path = await self._blueprints_at(workspace)
        raw = await self._json("GET", path, params={"latest": "true"})
        return [BlueprintInfo.model_validate(item) for item in raw["latest"]]

    async def blueprint(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> BlueprintVersion:
        """One version (``GET …/blueprints/NAME/versions/N``, ``latest`` by default)."""
        which = "latest" if version is None else str(version)
        path = await self._blueprints_at(workspace, name)
        return BlueprintVersion.model_validate(await self._json("GET", f"{path}/versions/{which}"))

    async def save_blueprint(
        self,
        name: str,
        blueprint: Blueprint | dict[str, Any],
        *,
        expected_version: int | None = None,
        note: str | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Store the next version (``PUT …/blueprints/NAME``)."""
        body = blueprint
        if not isinstance(body, dict):  # a Blueprint
            body = body.model_dump(mode="json", exclude_defaults=True)
        given = {"expected_version": expected_version, "note": note}
        params = {k: v for k, v in given.items() if v is not None}
        path = await self._blueprints_at(workspace, name)
        return BlueprintVersion.model_validate(
            await self._json("PUT", path, params=params, json=body)
        )

    async def blueprint_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[BlueprintInfo]:
        """Every version, oldest first (``GET …/blueprints/NAME/versions``)."""
        path = await self._blueprints_at(workspace, name)
        raw = await self._json("GET", f"{path}/versions")
        return [BlueprintInfo.model_validate(item) for item in raw["versions"]]

    async def blueprint_diff(
        self, name: str, a: int, b: int, *, workspace: str | None = None
    ) -> BlueprintDiff:
        """Version ``a`` to ``b`` (``GET …/blueprints/NAME/diff?a=A&b=B``)."""
        path = await self._blueprints_at(workspace, name)
        raw = await self._json("GET", f"{path}/diff", params={"a": a, "b": b})
        return BlueprintDiff.model_validate(raw)

    async def rollback_blueprint(
        self,
        name: str,
        version: int,
        *,
        expected_version: int | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Save an old version as the next (``POST …/blueprints/NAME/rollback``)."""
        path = await self._blueprints_at(workspace, name)
        body = {"version": version, "expected_version": expected_version}
        return BlueprintVersion.model_validate(
            await self._json("POST", f"{path}/rollback", json=body)
        )
