"""The SDK's stored-blueprint operations: ``AsyncClient``'s and ``Client``'s."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from helix.runtime import Blueprint

    from ._async_client import AsyncClient
    from ._blueprint_models import BlueprintDiff, BlueprintInfo, BlueprintVersion
    from ._protocol import HelixApi

T = TypeVar("T")


class AsyncClientBlueprints:
    """``AsyncClient``'s stored-blueprint operations, documented on ``BlueprintDoor``."""

    if TYPE_CHECKING:

        @property
        def api(self) -> HelixApi: ...

    async def blueprints(self, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """The workspace's stored blueprints, each at its latest version."""
        return await self.api.blueprints(workspace=workspace)

    async def blueprint(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> BlueprintVersion:
        """One version of a stored blueprint, with its fields (default: the latest)."""
        return await self.api.blueprint(name, version=version, workspace=workspace)

    async def save_blueprint(
        self,
        name: str,
        blueprint: Blueprint | dict[str, Any],
        *,
        expected_version: int | None = None,
        note: str | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Store a blueprint as the next version of ``name`` (a stale one: 409)."""
        return await self.api.save_blueprint(
            name, blueprint, expected_version=expected_version, note=note, workspace=workspace
        )

    async def blueprint_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[BlueprintInfo]:
        """Every version, oldest first."""
        return await self.api.blueprint_history(name, workspace=workspace)

    async def blueprint_diff(
        self, name: str, a: int, b: int, *, workspace: str | None = None
    ) -> BlueprintDiff:
        """Version ``a`` to version ``b``: unified diff of canonical YAML, fields changed."""
        return await self.api.blueprint_diff(name, a, b, workspace=workspace)

    async def rollback_blueprint(
        self,
        name: str,
        version: int,
        *,
        expected_version: int | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Save version ``version``'s fields as the next version."""
        return await self.api.rollback_blueprint(
            name, version, expected_version=expected_version, workspace=workspace
        )


class ClientBlueprints:
    """``Client``'s stored-blueprint operations (``AsyncClient``'s, without ``await``)."""

    if TYPE_CHECKING:
        _async: AsyncClient

        def _call(self, coroutine: Coroutine[Any, Any, T]) -> T: ...

    def blueprints(self, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """The workspace's stored blueprints, each at its latest version."""
        return self._call(self._async.blueprints(workspace=workspace))

    def blueprint(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> BlueprintVersion:
        """One version of a stored blueprint, with its fields (default: the latest)."""
        return self._call(self._async.blueprint(name, version=version, workspace=workspace))

    def save_blueprint(
        self,
        name: str,
        blueprint: Blueprint | dict[str, Any],
        *,
        expected_version: int | None = None,
        note: str | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Store a blueprint as the next version of ``name`` (a stale one: 409)."""
        return self._call(
            self._async.save_blueprint(
                name, blueprint, expected_version=expected_version, note=note, workspace=workspace
            )
        )

    def blueprint_history(self, name: str, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """Every version, oldest first."""
        return self._call(self._async.blueprint_history(name, workspace=workspace))

    def blueprint_diff(
        self, name: str, a: int, b: int, *, workspace: str | None = None
    ) -> BlueprintDiff:
        """Version ``a`` to version ``b``."""
        return self._call(self._async.blueprint_diff(name, a, b, workspace=workspace))

    def rollback_blueprint(
        self,
        name: str,
        version: int,
        *,
        expected_version: int | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Save version ``version``'s fields as the next version."""
        return self._call(
            self._async.rollback_blueprint(
                name, version, expected_version=expected_version, workspace=workspace
            )
        )
