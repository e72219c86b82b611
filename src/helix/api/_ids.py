"""Run ids as people type them: the whole id, any unique prefix of it, or ``last``.

A prefix may leave out the ``run_`` every generated id starts with (``96a9`` and
``run_96a9`` name the same run), because people copy the part that differs. Only the
runs the caller may see count, for matching and for ambiguity alike, so a prefix never
tells anyone about another workspace's runs. What is resolved is the run's full id:
events, logs and answers always carry it, never the prefix.
"""

from __future__ import annotations

from collections.abc import Collection

from helix.errors import AmbiguousRunError, RunNotFoundError
from helix.kernel.log import EventStore, RunRecord

LAST = "last"
"""Names the newest run the caller may see (newest by creation)."""
RUN_PREFIX = "run_"
"""What every generated run id starts with (a prefix may leave it out)."""
SHOWN = 5
"""Candidates an ambiguity error lists."""
_MAX_ID = 128


async def resolve_run(
    store: EventStore, ref: str, *, workspaces: Collection[str] | None = None
) -> RunRecord:
    """The run ``ref`` names among those of ``workspaces`` (``None``: every run).

    An exact id wins over a longer id it starts. ``RunNotFoundError`` when none
    matches; ``AmbiguousRunError`` (listing a few full ids) when several do.
    """
    if ref == LAST:
        newest = await store.list_runs(limit=1, workspaces=workspaces)
        if not newest.runs:
            raise _not_found(ref, "there are no runs yet (`last` names the newest run)")
        return newest.runs[0]
    if not plausible(ref):
        raise RunNotFoundError(ref)
    try:
        exact = await store.get_run(ref)
    except RunNotFoundError:
        pass
    else:
        if workspaces is None or exact.workspace in workspaces:
            return exact
    forms = [ref] if ref.startswith(RUN_PREFIX) else [ref, RUN_PREFIX + ref]
    found: dict[str, RunRecord] = {}
    for form in forms:
        for record in await store.find_runs(form, workspaces=workspaces, limit=SHOWN + 1):
            found[record.id] = record
    if not found:
        raise RunNotFoundError(ref)
    if len(found) == 1:
        return next(iter(found.values()))
    ids = sorted(found)
    raise AmbiguousRunError(ref, ids[:SHOWN], more=len(ids) > SHOWN)


def plausible(ref: str) -> bool:
    """Whether ``ref`` could start an id (the characters the log allows in one) or is ``last``."""
    bare = ref.replace("-", "").replace("_", "")
    return 0 < len(ref) <= _MAX_ID and (bare == "" or bare.isalnum())


def _not_found(ref: str, message: str) -> RunNotFoundError:
    error = RunNotFoundError(ref)
    error.args = (message,)
    return error
