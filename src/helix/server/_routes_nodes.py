"""``GET /nodes`` and ``POST /nodes/{id}/drain``: where the server's runs are driven.

The server's executor's nodes (``local``, worker processes, Ray nodes), through the one
door (``LocalApi.nodes``/``drain_node``). Nodes are the server's, not a workspace's, so
only the owners and admins of a team workspace (``default`` is one) may look or drain;
members, viewers, and a user who owns only their personal workspace get 403. A node's
``runs`` lists only the runs of the caller's workspaces, ``run_count`` all of them.
"""

from __future__ import annotations

from fastapi import APIRouter

from helix.accounts import can_administer
from helix.api import Drained, NodeList

from ._api import local_api
from ._auth import Caller
from ._deps import CallerDep, State
from ._errors import ApiError
from ._state import ServerState

router = APIRouter(tags=["nodes"])


async def _require_admin(state: ServerState, caller: Caller, what: str) -> None:
    """403 unless the caller owns or administers a team workspace."""
    for name, role in caller.roles.items():
        if can_administer(role):
            workspace = await state.accounts.store.get_workspace(name)
            if workspace is not None and workspace.kind == "team":
                return
    raise ApiError(403, "forbidden", f"only team workspaces' owners and admins may {what}")


@router.get("/nodes", response_model=NodeList)
async def list_nodes(caller: CallerDep, state: State) -> NodeList:
    """The executor's nodes: state, address, resources, labels, the runs each drives."""
    await _require_admin(state, caller, "see the nodes")
    return await local_api(state, caller).nodes()


@router.post(
    "/nodes/{node_id}/drain",
    response_model=Drained,
    responses={404: {"description": "no such node"}, 409: {"description": "cannot drain it"}},
)
async def drain_node(node_id: str, caller: CallerDep, state: State) -> Drained:
    """Stop giving the node runs; its runs move to other nodes at their next turn boundary.

    404 ``node_not_found`` for an unknown node; 409 ``invalid_node_state`` when its runs
    have nowhere to go (the ``local`` executor's one node, a dead node).
    """
    await _require_admin(state, caller, "drain a node")
    return await local_api(state, caller).drain_node(node_id)
