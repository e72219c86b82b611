"""The event that says why a run started: an automation fired it."""

from __future__ import annotations

from typing import ClassVar, Literal

from ._payload import Payload


class AutomationFired(Payload):
    """An automation of the run's workspace started this run (logged right after ``run.created``).

    ``slot`` names what fired: ``cron:ISO`` (the schedule's slot, UTC), ``webhook:…``
    (a digest of the signed request) or ``event:RUN:TYPE`` (the run whose ending
    triggered it). Never the webhook's secret or body.
    """

    TYPE: ClassVar[str] = "automation.fired"

    automation_id: str
    name: str
    trigger: Literal["cron", "webhook", "event"]
    slot: str
    missed: bool = False
    """A cron slot that passed while no server ran, fired on start per the policy."""
    source_run: str | None = None
    """For an ``event`` trigger: the run whose ending fired it."""
