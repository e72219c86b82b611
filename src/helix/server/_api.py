"""The server's door to runs: ``LocalApi`` over its engine, acting as the caller.

Routes check who may see or change what (``Caller``: a run of another workspace is a
404, a viewer cannot act; a prefix or ``last`` is resolved among the caller's runs),
then call this with the run's full id; the API does the work exactly as it does
embedded, so each operation has one code path whichever door it comes through. Two
reads stay the server's own: a page of events (the stored JSON joined, not re-built)
and the all-runs stream; policy replay calls the runtime directly.
"""

from __future__ import annotations

from functools import partial

from helix.api import AutomationSetup, LocalApi

from ._auth import Caller
from ._routes_blueprints import stored_blueprint
from ._state import ServerState


def local_api(state: ServerState, caller: Caller) -> LocalApi:
    """``LocalApi`` as ``caller``: their workspaces' runs only, and the server's rules.

    Named worlds only, stored blueprints, the server's driver.
    """
    return LocalApi(
        state.engine,
        actor=caller.actor,
        workspaces=caller.roles,
        worlds=state.config.worlds,
        world_paths=False,
        blueprints=partial(stored_blueprint, state.accounts),
        drive=state.drive,
        executor=state.executor,
        automations=AutomationSetup(
            state.automations, partial(stored_blueprint, state.accounts), state.clock
        ),
        workflows=state.workflows,
        memory=state.memory,
    )
