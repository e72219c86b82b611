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
from typing import TYPE_CHECKING, Any

from helix.api import AutomationSetup, LocalApi

from ._auth import Caller
from ._state import ServerState

if TYPE_CHECKING:
    from helix.accounts import Accounts
    from helix.runtime import Blueprint


def checked_blueprint(body: dict[str, Any], name: str | None = None) -> Blueprint:
    """``body`` as a blueprint (named ``name`` unless it names itself), or a 422."""
    from helix.runtime import Blueprint

    return Blueprint.parse(body, source="invalid blueprint", name=name)


async def stored_blueprint(accounts: Accounts, workspace: str, name: str) -> Blueprint:
    """The workspace's blueprint called ``name``, at its latest version (404 if none)."""
    return checked_blueprint((await accounts.blueprint(workspace, name)).body, name)


def local_api(state: ServerState, caller: Caller) -> LocalApi:
    """``LocalApi`` as ``caller``: their workspaces' runs only, and the server's rules.

    Named worlds only, the accounts' stored blueprints, the server's driver.
    """
    return LocalApi(
        state.engine,
        actor=caller.actor,
        workspaces=caller.roles,
        worlds=state.config.worlds,
        world_paths=False,
        accounts=state.accounts.store,
        drive=state.drive,
        executor=state.executor,
        automations=AutomationSetup(
            state.automations, partial(stored_blueprint, state.accounts), state.clock
        ),
        workflows=state.workflows,
        memory=state.memory,
        replies=state.replies,
    )
