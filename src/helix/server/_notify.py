"""Notifications through Apprise, configured by its URLs (``HELIX_NOTIFY``).

The server follows every run on its database and sends what ``helix.notify.notice``
says an event calls for: an approval asked (with Allow and Deny links), a run finished
or failed, a budget reached.
"""

from __future__ import annotations

import asyncio
import logging

from helix.errors import SubscriptionOverflowError
from helix.kernel.events import Event
from helix.kernel.log import EventStore
from helix.notify import Links, Notice, Services, notice

from ._auth import Signer

log = logging.getLogger("helix.server.notify")


class Notifier:
    """Follows every run's log and tells the configured services what needs a person."""

    def __init__(self, urls: tuple[str, ...], public_url: str, signer: Signer) -> None:
        self.urls = urls
        self.links = Links(public_url, signer)

    def message(self, event: Event) -> Notice | None:
        """The notification to send for ``event``, if it is worth one."""
        return notice(event, self.links)

    async def follow(self, store: EventStore) -> None:
        """Send a notification for each event that calls for one, until cancelled."""
        services = Services(self.urls)
        while True:
            try:
                async with store.subscribe_all(max_queue=10_000) as events:
                    async for event in events:
                        message = self.message(event)
                        if message is not None:
                            await services.send(message)
            except SubscriptionOverflowError:
                await asyncio.sleep(0)  # a burst past the queue: its notifications are lost
