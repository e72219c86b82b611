"""The SDK's budget operations: ``AsyncClient``'s and ``Client``'s (``BudgetDoor``'s)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from helix.budgets import BudgetList, BudgetUsage

    from ._async_client import AsyncClient
    from ._protocol import HelixApi

T = TypeVar("T")


class AsyncClientBudgets:
    """``AsyncClient``'s budget operations, documented on ``BudgetDoor``."""

    if TYPE_CHECKING:

        @property
        def api(self) -> HelixApi: ...

    async def budgets(self, *, workspace: str | None = None) -> BudgetList:
        """The workspace's budgets, each with what it spent, holds and has left this period."""
        return await self.api.budgets(workspace=workspace)

    async def set_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        usd: float | None = None,
        tokens: int | None = None,
        workspace: str | None = None,
    ) -> BudgetUsage:
        """Set a budget's caps (owners and admins only)."""
        return await self.api.set_budget(
            kind, name=name, period=period, usd=usd, tokens=tokens, workspace=workspace
        )

    async def remove_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        workspace: str | None = None,
    ) -> None:
        """Remove a budget."""
        await self.api.remove_budget(kind, name=name, period=period, workspace=workspace)


class ClientBudgets:
    """``Client``'s budget operations (blocking), documented on ``BudgetDoor``."""

    if TYPE_CHECKING:
        _async: AsyncClient

        def _call(self, coroutine: Coroutine[Any, Any, T]) -> T: ...

    def budgets(self, *, workspace: str | None = None) -> BudgetList:
        """The workspace's budgets, each with what it spent, holds and has left this period."""
        return self._call(self._async.budgets(workspace=workspace))

    def set_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        usd: float | None = None,
        tokens: int | None = None,
        workspace: str | None = None,
    ) -> BudgetUsage:
        """Set a budget's caps (owners and admins only)."""
        return self._call(
            self._async.set_budget(
                kind, name=name, period=period, usd=usd, tokens=tokens, workspace=workspace
            )
        )

    def remove_budget(
        self,
        kind: str,
        *,
        name: str | None = None,
        period: str = "month",
        workspace: str | None = None,
    ) -> None:
        """Remove a budget."""
        self._call(self._async.remove_budget(kind, name=name, period=period, workspace=workspace))
