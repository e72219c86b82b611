"""Sending notifications to the services named by Apprise URLs (``HELIX_NOTIFY``).

A send that fails is tried again after ``RETRY_DELAYS_S`` (a service's brief outage, a
restart or a rate limit, must not lose an approval request a person is waiting for),
then logged as undelivered. URLs are never logged or shown: they carry tokens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
from typing import Any

from helix.errors import ConfigError

from ._message import Notice

log = logging.getLogger("helix.notify")

RETRY_DELAYS_S = (1.0, 5.0)
"""Pauses before sending a failed notification again."""
INSTALL = "pip install 'helix-harness[notify]'"


def check_services(urls: tuple[str, ...]) -> None:
    """``ConfigError`` unless Apprise is installed and understands every URL."""
    Services(urls, strict=True)


class Services:
    """The services a set of Apprise URLs names, ready to be told."""

    def __init__(self, urls: tuple[str, ...], *, strict: bool = False) -> None:
        """Load Apprise and add each URL; ``strict``: refuse one it does not understand.

        ``ConfigError`` when Apprise is not installed. Not strict, a URL it does not
        understand is left out with a warning (the others still work).
        """
        if importlib.util.find_spec("apprise") is None:
            raise ConfigError(f"HELIX_NOTIFY needs Apprise: {INSTALL}")
        import apprise

        self._apprise: Any = apprise.Apprise()
        for number, url in enumerate(urls, 1):
            if self._apprise.add(url):
                continue
            if strict:
                raise ConfigError(
                    f"HELIX_NOTIFY: Apprise does not understand URL number {number}"
                    " (see Apprise's list of services for the URL forms)"
                )
            log.warning("ignoring an Apprise URL it does not understand")

    async def send(self, notice: Notice) -> bool:
        """Send ``notice`` to every service, trying again after a failure; whether it went."""
        for delay in (*RETRY_DELAYS_S, None):
            try:
                if await self._apprise.async_notify(title=notice.title, body=notice.body):
                    return True
            except Exception as error:  # a plugin's bug must not stop a run's driver
                log.warning("a notification service failed: %s", type(error).__name__)
            if delay is not None:
                await asyncio.sleep(delay)
        tries = len(RETRY_DELAYS_S) + 1
        log.warning("a notification was not delivered after %d tries: %s", tries, notice.title)
        return False
