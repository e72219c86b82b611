"""Task graphs: start one from a plan, show its tasks, retry a failed task.

Thin adapters over ``LocalApi`` (``_api.py``), with the rights of runs: any member of
the graph's workspace reads it, editors and owners start graphs and retry tasks (a run
of another workspace is 404). Cancel a graph as any run (``POST /runs/{id}/cancel``);
decide a task's approval as any approval (``POST /runs/{id}/approvals/{request}``).
"""

from __future__ import annotations

from fastapi import APIRouter

from helix.api import GraphCreate, GraphRun, Run

from ._api import local_api
from ._deps import CallerDep, State
from ._errors import ApiError

router = APIRouter(tags=["graphs"])


@router.post(
    "/graphs",
    response_model=Run,
    status_code=201,
    responses={422: {"description": "the plan is not one (the error names the field)"}},
)
async def start_graph(body: GraphCreate, caller: CallerDep, state: State) -> Run:
    """Start a task graph from a plan (docs/graphs.md); the server drives it.

    A plan that is not one (a cycle, an unknown dependency, a bad report schema, a task
    without a model…) is a 422 ``invalid_blueprint`` naming the field, as a bad blueprint
    is everywhere; nothing is made.
    """
    workspace = body.workspace or caller.default_workspace()
    if workspace not in caller.roles:
        raise ApiError(404, "not_found", f"no workspace {workspace!r}")
    caller.require_act(workspace, "start runs")
    return await local_api(state, caller).create_graph(
        body.plan,
        world=body.world,
        workspace=workspace,
        auto_approve=body.auto_approve,
        attended=body.attended,
        budget_usd=body.budget_usd,
    )


@router.get(
    "/runs/{run_id}/graph",
    response_model=GraphRun,
    responses={404: {"description": "no such run, or the run is not a graph (not_a_graph)"}},
)
async def get_graph(run_id: str, caller: CallerDep, state: State) -> GraphRun:
    """The graph run and its tasks (status, attempts, runs, report, error, cost)."""
    run_id = (await caller.run(state.store, run_id)).id
    return await local_api(state, caller).graph(run_id)


@router.post(
    "/runs/{run_id}/graph/tasks/{task}/retry",
    response_model=GraphRun,
    responses={
        404: {"description": "no such run or task (not_a_graph, task_not_found)"},
        409: {"description": "the task has not failed for good, or the graph has ended"},
    },
)
async def retry_task(run_id: str, task: str, caller: CallerDep, state: State) -> GraphRun:
    """Try a failed task again (a new run); a graph paused for it resumes."""
    run_id = (await caller.run(state.store, run_id, act="retry tasks")).id
    return await local_api(state, caller).retry_task(run_id, task)
