"""Request and response bodies: the OpenAPI document is generated from these.

The wire models of runs live in ``helix.api`` (one definition for the server, the SDK
and the CLI); they are re-exported here under the names the routes use. What is left
here is the server's own: accounts and health.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from helix.api import Accepted as Accepted
from helix.api import Approval, CreatedRun, Decided, Forked, Imported, Parent, Run, RunEvent
from helix.api import ApprovalList as ApprovalList
from helix.api import DecisionBody as DecisionBody
from helix.api import EventPage as EventPage
from helix.api import ForkBody as ForkBody
from helix.api import ResumeBody as ResumeBody
from helix.api import RunCreate as RunCreate
from helix.api import RunList as RunList
from helix.api import SteerBody as SteerBody

# The names the routes knew them by (to be replaced by helix.api's own as they move).
ApprovalOut = Approval
DecisionOut = Decided
EventOut = RunEvent
ForkOut = Forked
ForkPointOut = Parent
ImportOut = Imported
NewRunOut = CreatedRun
RunOut = Run

Text = Field(min_length=1, max_length=100_000)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginBody(_Body):
    """``POST /auth/login``."""

    username: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=1, max_length=1000)


class LinkBody(_Body):
    """``POST /auth/link``: a one-time login token, as in the first start's link."""

    token: str = Field(min_length=1, max_length=200)


class TokenOut(BaseModel):
    """A signed token and when it expires."""

    token: str
    expires_at: str


class Health(BaseModel):
    """``GET /health``."""

    status: Literal["ok"] = "ok"
    version: str


class ApiTokenOut(BaseModel):
    """A new API token: shown once, stored hashed."""

    token: str


class Me(BaseModel):
    """The caller and their roles."""

    user: str
    workspaces: dict[str, str]
