"""``LocalApi``'s reads of a run's world: its files, a file, a diff, now or at a turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from helix.world import WorldBrowser, parse_point

from ._models import FileEntry

if TYPE_CHECKING:
    from helix.kernel.log import EventStore
    from helix.runtime import Engine

    from ._models import Point


class WorldReads:
    """``HelixApi.files``, ``read`` and ``diff`` (a mixin: it uses the API's store and engine)."""

    if TYPE_CHECKING:
        store: EventStore

        @property
        def engine(self) -> Engine: ...

        async def _id(self, run_id: str) -> str: ...

    def _browser(self) -> WorldBrowser:
        return WorldBrowser(self.store, self.engine.objects)

    async def files(
        self, run_id: str, path: str | None = None, *, turn: Point = "now"
    ) -> list[FileEntry]:
        """The world's paths at or under ``path`` at a point."""
        listing = await self._browser().files(await self._id(run_id), path, parse_point(turn))
        return [FileEntry.of(info) for info in listing]

    async def read(self, run_id: str, path: str, *, turn: Point = "now") -> bytes:
        """A file's content at a point."""
        return await self._browser().read(await self._id(run_id), path, parse_point(turn))

    async def diff(
        self, run_id: str, *, start: Point = "start", end: Point = "now", path: str | None = None
    ) -> str:
        """A unified diff of the world between two points."""
        run_id = await self._id(run_id)
        return await self._browser().diff(run_id, parse_point(start), parse_point(end), path)
