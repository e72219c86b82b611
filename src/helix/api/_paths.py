"""The paths of the REST API a client asks: a run's, and any id as one path segment."""

from __future__ import annotations

from helix.errors import NotFoundError, RunNotFoundError

from ._ids import plausible


def run_path(run_id: str) -> str:
    """The run's path: its id (or prefix, or ``last``) as one path segment.

    What no id could start (``/``, spaces, …) is not found here, as the server would say.
    """
    if not plausible(run_id):
        raise RunNotFoundError(run_id)
    return f"/runs/{segment(run_id)}"


def segment(text: str) -> str:
    """``text`` as one path segment, whatever it holds (no ``/`` or ``..`` escapes it)."""
    from urllib.parse import quote

    if not text:
        raise NotFoundError("an empty id names nothing")
    return quote(text, safe="") if text not in (".", "..") else text.replace(".", "%2E")
