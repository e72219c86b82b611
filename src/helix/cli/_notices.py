"""Telling people what a run driven here needs, when nobody answers at this terminal.

A run this process drives with no person at its terminal (a detached run's background
``helix resume``, or output that is not a terminal) sends what the server would send:
to the Apprise URLs of ``HELIX_NOTIFY``, an approval asked by the run or by a child it
delegated to (with the ``helix approve``/``helix deny`` command lines), and the run's
completion, failure or pause at its budget. With ``HELIX_PUBLIC_URL`` (a server on this
store), approvals carry the server's signed Allow and Deny links too. Approvals already
pending when the process takes the run over are sent first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable
from typing import TYPE_CHECKING

import typer

from helix.config import Settings
from helix.errors import ConfigError, SubscriptionOverflowError

if TYPE_CHECKING:
    from helix.kernel.events import Event
    from helix.kernel.log import EventStore
    from helix.notify import Links, Services

log = logging.getLogger("helix.cli.notices")

DRAIN_S = 30.0
"""After the drive ends, how long the last notifications may take to go out."""
_PAGE = 1000


def check_notices(settings: Settings) -> None:
    """``ConfigError`` if ``HELIX_NOTIFY`` is set and cannot be used (checked before a run)."""
    if settings.notify:
        from helix.notify import check_services

        check_services(settings.notify)


async def drive_telling(store: EventStore, run_id: str, drive: Awaitable[object]) -> None:
    """Await ``drive`` (the run driven here), sending what calls for a person meanwhile."""
    settings = Settings.from_env()
    if not settings.notify:
        await drive
        return
    from helix.notify import Services

    try:
        services = Services(settings.notify)
    except ConfigError as error:  # a run is not stopped for its notifications
        typer.echo(f"warning: no notifications: {error}", err=True)
        await drive
        return
    teller = _Teller(store, run_id, services, await _links(settings))
    await teller.around(drive)


async def _links(settings: Settings) -> Links | None:
    """The server's links, when ``HELIX_PUBLIC_URL`` says where a server on this store is.

    The key is the one every server on the database signs with (made here if no server
    has made it yet: the server adopts it).
    """
    if settings.public_url is None:
        return None
    from helix.accounts import open_accounts
    from helix.notify import Links, SecretSigner

    accounts = await open_accounts(settings.db_url)
    try:
        secret = await accounts.secret("jwt", secrets.token_bytes(32))
    finally:
        await accounts.close()
    return Links(settings.public_url, SecretSigner(secret))


class _Teller:
    """Follows a run and its children in the store, and sends what calls for a person."""

    def __init__(
        self, store: EventStore, root: str, services: Services, links: Links | None
    ) -> None:
        self.store = store
        self.root = root
        self.services = services
        self.links = links
        self.tree = {root}
        """The run and the children it delegated to (their approvals are sent too)."""
        self.told: set[str] = set()
        """Approval requests sent already (a pending one may be read twice at the start)."""
        self.seen = -1
        """The root's last event handled."""
        self.until: int | None = None
        """Once the drive has ended: the root's head, the last event worth waiting for."""
        self.listening = asyncio.Event()

    async def around(self, drive: Awaitable[object]) -> None:
        """Drive, telling as the run goes; then let the last notifications go out."""
        failed: list[Exception] = []
        async with asyncio.TaskGroup() as group:
            telling = group.create_task(self._tell())
            try:
                await self.listening.wait()  # subscribed before the drive: nothing is missed
                await self._tell_pending()
                await drive
                self.until = (await self.store.get_run(self.root)).head
                if self.seen < self.until:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(telling), DRAIN_S)
            except Exception as error:  # the drive's own error, raised as it is (not a group)
                failed.append(error)
            finally:
                telling.cancel()
        if failed:
            raise failed[0]

    async def _tell(self) -> None:
        try:
            await self._follow()
        except Exception:  # notifications never stop the run they are about
            log.exception("notifications stopped")
            self.listening.set()

    async def _follow(self) -> None:
        while True:
            try:
                async with self.store.subscribe_all(max_queue=10_000) as events:
                    self.listening.set()
                    async for event in events:
                        if event.run_id in self.tree:
                            await self._handle(event)
                        if event.run_id == self.root:
                            self.seen = event.seq
                            if self.until is not None and self.seen >= self.until:
                                return
            except SubscriptionOverflowError:
                await asyncio.sleep(0)  # a burst past the queue: its notifications are lost

    async def _tell_pending(self) -> None:
        """Send the approvals the run already waits on (taken over from a terminal)."""
        from helix.kernel.session import replay_run

        pending = (await replay_run(self.store, self.root)).pending_approvals
        after = -1
        while pending and (page := await self.store.read(self.root, after=after, limit=_PAGE)):
            for event in page:
                if event.type == "approval.requested" and event.data["request_id"] in pending:
                    await self._handle(event)
            after = page[-1].seq

    async def _handle(self, event: Event) -> None:
        from helix.notify import notice

        if event.type == "agent.spawned":
            self.tree.add(str(event.data["child_run_id"]))
            return
        if event.type == "approval.requested":
            request = str(event.data["request_id"])
            if request in self.told:
                return
            self.told.add(request)
        elif event.run_id != self.root:
            return  # a child's end is its parent's business
        message = notice(event, self.links)
        if message is not None:
            await self.services.send(message)
