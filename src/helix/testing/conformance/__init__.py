"""Conformance suites that every backend of a Helix interface must pass."""

from ._event_store import EventStoreConformance as EventStoreConformance
from ._event_store import Reopen as Reopen

__all__ = ["EventStoreConformance", "Reopen"]
