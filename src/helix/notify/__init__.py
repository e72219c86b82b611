"""Notifications: what to tell a person about a run, and sending it through Apprise.

Shared by the server (which follows every run on its database) and by a process that
drives a run here with nobody at its terminal (a detached run's ``helix resume``).
Both build the same messages; links to the server are added when a public URL and a
``LinkSigner`` (the server's signing key) are at hand.
"""

from ._deliver import Services as Services
from ._deliver import check_services as check_services
from ._message import Links as Links
from ._message import LinkSigner as LinkSigner
from ._message import Notice as Notice
from ._message import SecretSigner as SecretSigner
from ._message import decision_link as decision_link
from ._message import notice as notice

__all__ = [
    "LinkSigner",
    "Links",
    "Notice",
    "SecretSigner",
    "Services",
    "check_services",
    "decision_link",
    "notice",
]
