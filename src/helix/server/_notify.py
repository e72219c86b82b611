"""Notifications through Apprise, configured by its URLs (``HELIX_NOTIFY``).

Sent on: an approval asked (with Allow and Deny links), a run finished or failed, a
budget reached.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from helix.errors import SubscriptionOverflowError
from helix.kernel.events import Event
from helix.kernel.log import EventStore

from ._auth import Signer
from ._links import decision_link

log = logging.getLogger("helix.server.notify")


class Notifier:
    """Follows every run's log and tells the configured services what needs a person."""

    def __init__(self, urls: tuple[str, ...], public_url: str, signer: Signer) -> None:
        self.urls = urls
        self.public_url = public_url
        self.signer = signer

    def message(self, event: Event) -> tuple[str, str] | None:
        """The title and body to send for ``event``, if it is worth a notification."""
        data: dict[str, Any] = event.data
        run = f"{self.public_url}/#/runs/{event.run_id}"
        if event.type == "approval.requested":
            allow = decision_link(self.signer, self.public_url, event.run_id, data, "allow")
            deny = decision_link(self.signer, self.public_url, event.run_id, data, "deny")
            body = (
                f"Run {event.run_id} asks to call {data['name']}"
                f" with {json.dumps(data['args'])}.\n"
                f"Allow: {allow}\nDeny: {deny}\n"
                f"Deadline: {data.get('expires_at') or 'none'}. Run: {run}"
            )
            return f"Approval needed: {data['name']}", body
        if event.type == "run.completed":
            return "Run completed", f"Run {event.run_id} completed: {data.get('summary')}\n{run}"
        if event.type == "run.failed":
            return "Run failed", f"Run {event.run_id} failed: {data.get('error')}\n{run}"
        if event.type == "run.paused" and data.get("reason") == "budget":
            return "Budget reached", f"Run {event.run_id} paused at its budget cap.\n{run}"
        return None

    async def follow(self, store: EventStore) -> None:
        """Send a notification for each event that calls for one, until cancelled."""
        import apprise

        notifier = apprise.Apprise()
        for url in self.urls:
            if not notifier.add(url):
                log.warning("ignoring an Apprise URL it does not understand")
        while True:
            try:
                async with store.subscribe_all(max_queue=10_000) as events:
                    async for event in events:
                        message = self.message(event)
                        if message is not None:
                            await _deliver(notifier, *message)
            except SubscriptionOverflowError:
                await asyncio.sleep(0)  # a burst past the queue: its notifications are lost


_RETRY_DELAYS_S = (1.0, 5.0)
"""Pauses before sending a failed notification again: a service's brief outage (a
restart, a rate limit) must not lose an approval request a person is waiting for."""


async def _deliver(notifier: Any, title: str, body: str) -> None:
    for delay in (*_RETRY_DELAYS_S, None):
        if await notifier.async_notify(title=title, body=body):
            return
        if delay is not None:
            await asyncio.sleep(delay)
    tries = len(_RETRY_DELAYS_S) + 1
    log.warning("a notification was not delivered after %d tries: %s", tries, title)
