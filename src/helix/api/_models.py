"""The wire models: what the REST API sends and takes, and what the SDK hands out.

One definition each. The server's OpenAPI document is generated from these, the HTTP
client parses answers with them, and the local implementation builds them from the
store's records, so a run or an event looks the same whichever door it came through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from helix.kernel.events import (
    DEFAULT_REGISTRY,
    TERMINAL_EVENTS,
    TERMINAL_STATUSES,
    Payload,
    RunStatus,
)
from helix.kernel.events import Event as KernelEvent
from helix.kernel.log import RunRecord
from helix.kernel.session import PendingApproval, SpendBucket, SpendGroup, SpendReport
from helix.kernel.session import Usage as KernelUsage
from helix.world import FileInfo

from ._questions import SourceQuestion, question_of
from ._worlds import WORLD_NAME

if TYPE_CHECKING:
    from helix.runtime import KeepOutcome

Decision = Literal["allow", "deny"]
Point = Literal["start", "now", "last"] | int
"""A point of a run's world: its ``start``, ``now`` (``last``: the same), or the end of a
turn (a number)."""


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- runs ---------------------------------------------------------------------------------


class Parent(_Out):
    """Where a fork branched off: the parent run and the last seq they share."""

    run_id: str
    seq: int
    turn: int | None = None
    """The turn whose end the fork branched at (0: the start)."""


class Run(_Out):
    """A run, as ``GET /runs/{id}`` shows it."""

    id: str
    status: RunStatus
    objective: str
    model: str
    blueprint: str | None
    world: str
    parent: Parent | None
    blueprint_version: int | None = None
    """The version of the workspace's stored blueprint ``blueprint`` it was made from
    (``run.created.blueprint_version``); ``None``: not a stored one."""
    workspace: str
    turns: int
    cost_usd: float
    input_tokens: int
    output_tokens: int
    events: int
    """How many events the run's log holds (its next seq)."""
    created_at: str
    updated_at: str
    driven: bool | None = None
    """Whether a process is driving the run now (holds its live lease in the store the
    answer comes from: any process, on any machine, sharing that store); ``None`` once
    it has ended (nothing is left to drive). A ``queued``, ``running`` or ``waiting``
    run with ``driven`` false moves only when someone resumes it (``helix resume ID``)."""

    @property
    def head(self) -> int:
        """The seq of the run's last event."""
        return self.events - 1

    @property
    def finished(self) -> bool:
        """Whether the run has ended (completed, failed or cancelled)."""
        return self.status in TERMINAL_STATUSES

    @property
    def stalled(self) -> bool:
        """Whether it looks active (queued, running, waiting) while nothing drives it."""
        return self.driven is False and self.status in ("queued", "running", "waiting")

    @classmethod
    def of(
        cls,
        record: RunRecord,
        *,
        driven: bool | None = None,
        fork_turn: int | None = None,
        blueprint_version: int | None = None,
    ) -> Run:
        """From the run registry's row, whether a driver holds it now, a fork's turn.

        And the stored blueprint's version its ``run.created`` names.
        """
        parent = record.parent
        return cls(
            id=record.id,
            status=record.status,
            objective=record.objective,
            model=record.model,
            blueprint=record.blueprint,
            blueprint_version=blueprint_version,
            world=record.world,
            parent=None
            if parent is None
            else Parent(run_id=parent.run_id, seq=parent.seq, turn=fork_turn),
            workspace=record.workspace,
            turns=record.turns,
            cost_usd=record.cost_usd,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            events=record.next_seq,
            created_at=record.created_at,
            updated_at=record.updated_at,
            driven=None if record.status in TERMINAL_STATUSES else driven,
        )


class RunList(_Out):
    """A page of runs, newest first; pass ``next_cursor`` back for the next page."""

    runs: list[Run]
    next_cursor: str | None


class CreatedRun(_Out):
    """``POST /runs``'s answer: the new run's id and status."""

    id: str
    status: RunStatus


class RunCreate(_Body):
    """``POST /runs``."""

    objective: str = Field(min_length=1, max_length=100_000)
    blueprint: dict[str, Any] | str | None = Field(default=None)
    """A blueprint: inline (the fields of a blueprint file), or the name of one stored in
    the workspace (``PUT /workspaces/{workspace}/blueprints/{name}``): ``NAME`` its latest
    version, ``NAME@N`` version N."""
    blueprint_version: int | None = Field(default=None, ge=1)
    """With a stored blueprint's name: run this version of it (as ``NAME@N``)."""
    model: str | None = Field(default=None, min_length=1, max_length=500)
    world: str | None = Field(default=None, pattern=WORLD_NAME.pattern)
    """A folder name under the workspace's worlds (created if missing); default: a new one."""
    budget_usd: float | None = Field(default=None, ge=0, le=1e9)
    budget_tokens: int | None = Field(default=None, ge=0, le=10**15)
    """The run's own cap on input plus output tokens (over the blueprint's)."""
    auto_approve: bool = False
    attended: bool = True
    """``false``: nobody will answer, so a call needing approval is refused at once."""
    workspace: str | None = Field(default=None, max_length=64)
    """Default: the caller's personal workspace, else the first they may act in."""


# -- events -------------------------------------------------------------------------------


class RunEvent(_Out):
    """One event: the contract's JSON object (``data`` already upcast to its current shape)."""

    run_id: str
    seq: int
    type: str
    v: int
    ts: str
    turn: int | None
    actor: str
    data: dict[str, Any]

    @classmethod
    def of(cls, event: KernelEvent) -> RunEvent:
        """From the log's own event."""
        return cls.model_construct(**event.to_dict())

    def to_kernel(self) -> KernelEvent:
        """As the log's own event (what ``replay`` folds)."""
        return KernelEvent(
            self.run_id, self.seq, self.type, self.v, self.ts, self.turn, self.actor, self.data
        )

    def payload(self) -> Payload:
        """``data`` as its type's typed model (``ApprovalRequested``, ``ToolCompleted``, …)."""
        return DEFAULT_REGISTRY.parse(self.type, self.data)

    @property
    def terminal(self) -> bool:
        """Whether this event ends its run (``run.completed``, ``failed`` or ``cancelled``)."""
        return self.type in TERMINAL_EVENTS


class EventPage(_Out):
    """Events with seq > after, and the ``after`` of the next page."""

    events: list[RunEvent]
    next_after: int


# -- control ------------------------------------------------------------------------------


class SteerBody(_Body):
    """``POST /runs/{id}/steer``."""

    message: str = Field(min_length=1, max_length=100_000)


class Accepted(_Out):
    """The request was recorded in the run's log."""

    status: Literal["accepted"] = "accepted"


class Approval(_Out):
    """A pending approval request: a call's (or a connection's) decision, or a question."""

    request_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    expires_at: str | None
    question: SourceQuestion | None = None
    """Set when a tool source asks a person: allowing answers it (with ``answer``),
    denying declines it."""

    @classmethod
    def of(cls, pending: PendingApproval) -> Approval:
        """The wire form of a folded pending request."""
        return cls(
            request_id=pending.request_id,
            call_id=pending.call_id,
            name=pending.name,
            args=pending.args,
            expires_at=pending.expires_at,
            question=question_of(pending.question),
        )


class ApprovalList(_Out):
    """The run's pending approval requests."""

    approvals: list[Approval]


class DecisionBody(_Body):
    """``POST /runs/{id}/approvals/{request_id}``."""

    decision: Decision
    reason: str | None = Field(default=None, max_length=10_000)
    answer: dict[str, Any] | None = None
    """A question's answer (with ``allow``): its fields, checked against its schema."""


class Decided(_Out):
    """A recorded decision."""

    request_id: str
    decision: Decision


class ResumeBody(_Body):
    """``POST /runs/{id}/resume``: optionally with new caps (USD, tokens, turns, seconds)."""

    budget_usd: float | None = Field(default=None, ge=0, le=1e9)
    budget_tokens: int | None = Field(default=None, ge=0, le=10**15)
    max_turns: int | None = Field(default=None, ge=1, le=10_000_000)
    max_seconds: float | None = Field(default=None, gt=0, le=1e9)


class ForkBody(_Body):
    """``POST /runs/{id}/fork``."""

    turn: int = Field(ge=0, le=10_000_000)
    message: str | None = Field(default=None, max_length=100_000)
    model: str | None = Field(default=None, min_length=1, max_length=500)


class Forked(_Out):
    """A new fork."""

    id: str


# -- the world ----------------------------------------------------------------------------


class FileEntry(_Out):
    """One path of the world."""

    path: str
    kind: str = Field(description="file, dir or link")
    size: int
    mode: str = Field(description="permission bits, octal")
    hash: str = Field(description="SHA-256 of the content (empty for a folder)")

    @classmethod
    def of(cls, info: FileInfo) -> FileEntry:
        """From the world browser's answer."""
        return cls(path=info.path, kind=info.kind, size=info.size, mode=f"{info.mode:o}",
                   hash=info.hash)  # fmt: skip


class FileList(_Out):
    """A listing of the world (or of one folder of it) at a point."""

    files: list[FileEntry]


class RollbackBody(_Body):
    """Where to roll the world back to."""

    to: str | int = Field(default="start", description='"start" or a turn number')


class Rollback(_Out):
    """What the rollback did: the marker event's data."""

    to_turn: int
    restored: list[str]
    removed: list[str]
    reverted: list[dict[str, Any]]
    compensated: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    cannot_undo: list[dict[str, Any]]
    conflicts: list[dict[str, Any]] = Field(
        default_factory=list[dict[str, Any]],
        description="{path, detail}: left as they were (a link where a folder was due)",
    )


class Comparison(_Out):
    """Two runs side by side, and the diff from the first one's last world to the second's."""

    runs: list[Run]
    diff: str


class Kept(_Out):
    """What keeping a branch did to the original directory."""

    original: str
    """The run that owns the directory which received the branch's world."""
    target: str
    restored: list[str]
    removed: list[str]
    performed: list[dict[str, Any]]
    """The branch's withheld effects, performed now ({call_id, tool, detail})."""
    conflicts: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])

    @classmethod
    def of(cls, kept: KeepOutcome) -> Kept:
        """The wire form of the runtime's outcome."""
        return cls(
            original=kept.original,
            target=kept.target,
            restored=kept.restored,
            removed=kept.removed,
            performed=[o.model_dump(mode="json") for o in kept.performed],
            conflicts=[c.model_dump(mode="json") for c in kept.conflicts],
        )


class Imported(_Out):
    """An imported run."""

    id: str
    status: RunStatus
    events: int
    original_id: str | None = None
    """The exported run's id when a run here had it already and the import got a fresh
    one (``None``: it kept its id, or was given one)."""


# -- spend --------------------------------------------------------------------------------


class Usage(_Out):
    """Tokens and USD; ``unpriced_calls`` counts calls whose price was unknown."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, usage: KernelUsage) -> Usage:
        """From a replayed session's counters."""
        return cls(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                   cost_usd=usage.cost_usd, unpriced_calls=usage.unpriced_calls)  # fmt: skip

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )


class SpendPoint(_Out):
    """What one group spent in one time bucket."""

    start: str
    """The bucket's first moment, e.g. ``2026-12-01T00:00:00Z`` (UTC)."""
    key: str
    """The group's value (a ``provider:model``, a workspace, a run id...)."""
    usage: Usage


class WorldList(_Out):
    """``GET /workspaces/{w}/worlds``: the folders of a workspace's worlds, by name."""

    worlds: list[str]


class Spend(_Out):
    """What runs' own model calls cost: in total, by each grouping, and over time."""

    runs: int = 0
    total: Usage = Usage()
    by_provider: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    by_model: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    by_role: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    """By the role each call served: ``main``, ``summary``, ``planner``, ``worker``,
    ``judge`` (docs/models.md#roles)."""
    by_blueprint: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    by_person: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    """By who created each run (its ``run.created`` actor, e.g. ``user:ann``)."""
    by_workspace: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    by_run: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    by: SpendGroup = "model"
    """The grouping ``groups`` and ``series`` use."""
    groups: dict[str, Usage] = Field(default_factory=dict[str, Usage])
    """The ``by_*`` table of the chosen grouping."""
    bucket: SpendBucket | None = None
    series: list[SpendPoint] = Field(default_factory=list[SpendPoint])
    """With a ``bucket``: each (bucket, group) that spent, oldest first; else empty."""

    @classmethod
    def of(
        cls, report: SpendReport, *, by: SpendGroup = "model", bucket: SpendBucket | None = None
    ) -> Spend:
        """From the kernel's report."""

        def each(table: dict[str, KernelUsage]) -> dict[str, Usage]:
            return {key: Usage.of(value) for key, value in sorted(table.items())}

        tables = {
            "provider": each(report.by_provider),
            "model": each(report.by_model),
            "role": each(report.by_role),
            "blueprint": each(report.by_blueprint),
            "person": each(report.by_person),
            "workspace": each(report.by_workspace),
            "run": each(report.by_run),
        }
        return cls(
            runs=report.runs,
            total=Usage.of(report.total),
            by_provider=tables["provider"],
            by_model=tables["model"],
            by_role=tables["role"],
            by_blueprint=tables["blueprint"],
            by_person=tables["person"],
            by_workspace=tables["workspace"],
            by_run=tables["run"],
            by=by,
            groups=tables[by],
            bucket=bucket,
            series=[
                SpendPoint(start=p.start, key=p.key, usage=Usage.of(p.usage)) for p in report.series
            ],
        )
