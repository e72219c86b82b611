"""Policy replay over HTTP: what a candidate policy would have done with logged calls.

Thin on purpose: the runtime judges (``replay_policy``), exactly as for ``helix policy
replay``. Reading only, so any member of the run's workspace (a viewer too) may ask;
a run of a workspace the caller is not in is a 404, as on every run route.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field, model_validator

from helix.accounts import AccountNotFoundError
from helix.runtime import CandidatePolicy, PolicyReplay, replay_policy, replay_policy_workspace

from ._deps import CallerDep, State

router = APIRouter(tags=["policy"])

_MAX_TEXT = 65536


class PolicyReplayBody(BaseModel):
    """The candidate policy: as an object, or as the text of a policy file."""

    policy: dict[str, Any] | None = Field(
        default=None,
        description="policy, approvals, sandbox, budget sections (as in a blueprint)",
    )
    text: Annotated[str | None, Field(max_length=_MAX_TEXT)] = Field(
        default=None, description="a policy file's text, instead of policy"
    )
    format: Literal["yaml", "toml", "json"] = Field(
        default="yaml", description="how text is written (YAML reads JSON too)"
    )

    @model_validator(mode="after")
    def _one(self) -> PolicyReplayBody:
        if (self.policy is None) == (self.text is None):
            raise ValueError("give the candidate policy as either policy or text")
        return self

    def candidate(self) -> CandidatePolicy:
        """The candidate, or ``ConfigError`` (a 422) saying what is wrong with it."""
        if self.text is not None:
            return CandidatePolicy.from_text(self.text, format=self.format, source="invalid policy")
        return CandidatePolicy.parse(self.policy, source="invalid policy")


class WorkspaceReplay(BaseModel):
    """The candidate over every run of a workspace (each call judged once)."""

    workspace: str
    runs: list[PolicyReplay]


@router.post("/runs/{run_id}/policy-replay", response_model=PolicyReplay)
async def replay_run_policy(
    run_id: str, body: PolicyReplayBody, caller: CallerDep, state: State
) -> PolicyReplay:
    """Judge every logged call of the run with a candidate policy; report what would change.

    Runs no model and no tool, and appends nothing.
    """
    record = await caller.run(state.store, run_id)
    candidate = body.candidate()
    ceiling = await state.accounts.policy(record.workspace)
    return await replay_policy(
        state.store, record.id, candidate, tools=state.engine.tools, workspace_ceiling=ceiling
    )


@router.post("/workspaces/{workspace}/policy-replay", response_model=WorkspaceReplay)
async def replay_workspace_policy(
    workspace: str, body: PolicyReplayBody, caller: CallerDep, state: State
) -> WorkspaceReplay:
    """The same over every run of the workspace, oldest first."""
    if workspace not in caller.roles:
        raise AccountNotFoundError(f"no workspace {workspace!r}")
    candidate = body.candidate()
    ceiling = await state.accounts.policy(workspace)
    runs = await replay_policy_workspace(
        state.store, workspace, candidate, tools=state.engine.tools, workspace_ceiling=ceiling
    )
    return WorkspaceReplay(workspace=workspace, runs=runs)
