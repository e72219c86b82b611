"""What a session is at a point in its log: the values a fold over events produces."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

from helix.kernel.events import Budget, ForkPoint, RunStatus

from ._live import LiveState


@dataclass(frozen=True, slots=True)
class CallRequest:
    """A tool call the model asked for."""

    id: str
    name: str
    args: dict[str, Any]
    malformed: str | None = None
    """Why its arguments could not be read (``args`` is then empty); ``None``: they were."""
    raw_args: str | None = None
    """The arguments' text as the model sent it, for a malformed call only."""


@dataclass(frozen=True, slots=True)
class Message:
    """One entry of the conversation as the model sees it.

    ``user`` messages carry the objective and steering; ``assistant`` messages the
    model's text and the calls it asked for; ``tool`` messages one call's result.
    """

    role: Literal["user", "assistant", "tool"]
    text: str
    tool_calls: tuple[CallRequest, ...] = ()
    call_id: str | None = None
    ok: bool = True
    name: str | None = None
    """For a tool message, the tool's name."""


@dataclass(frozen=True, slots=True)
class PendingApproval:
    """An approval request that has not been decided yet."""

    request_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    expires_at: str | None
    question: dict[str, Any] | None = None
    """A source's question (``{source, message, schema}``): answered, not just decided;
    its call is already running, so the decision neither starts nor refuses it."""


@dataclass(frozen=True, slots=True)
class PendingChoice:
    """An options card waiting for a person's choice (``ui.asked`` with no ``ui.chosen``)."""

    component_id: str
    call_id: str
    choices: tuple[str, ...]
    """The ids a choice may name."""
    expires_at: str | None
    props: dict[str, Any] = field(default_factory=dict[str, Any])
    """The card's props (``question``, ``choices`` with labels, ``title``)."""


@dataclass(frozen=True, slots=True)
class ChoiceMade:
    """What closed an options card's wait (``ui.chosen``)."""

    choice: str | None
    """The chosen option's id; ``None``: closed without a choice."""
    by: str
    reason: str | None = None


TaskStatus = Literal["pending", "running", "completed", "failed", "skipped"]
"""Where a graph's task is: waiting for its dependencies, running, done, or failed for good."""


@dataclass
class TaskState:
    """One task of a graph run, folded from its ``task.*`` events."""

    status: TaskStatus = "pending"
    attempts: int = 0
    """How many attempts were started (a person's retry starts counting afresh)."""
    run_id: str | None = None
    """The run of the latest attempt."""
    runs: list[str] = field(default_factory=list[str])
    """Every attempt's run, oldest first."""
    objective: str | None = None
    """What the latest attempt's run was asked (the task's objective with its inputs)."""
    report: Any = None
    """The accepted report (``completed``)."""
    error: str | None = None
    """Why the latest attempt failed."""
    cost_usd: float = 0.0
    """What every finished attempt spent."""
    budget_usd: float | None = None
    """The budget set aside for the running attempt."""


@dataclass
class BranchProgress:
    """One branch of a strategy run, as its log tells it (``strategy.*`` events)."""

    run_id: str
    message: str | None = None
    model: str | None = None
    judge_run_id: str | None = None
    scored: bool = False
    """Whether its ``strategy.scored`` is in the log (it is never judged again)."""
    score: float | None = None
    status: str | None = None
    """How the branch ended, once scored."""


@dataclass
class StrategyProgress:
    """How far a strategy run got: branched, scored, chosen, kept."""

    turn: int
    branches: list[BranchProgress] = field(default_factory=list[BranchProgress])
    budget_usd: float | None = None
    decided: bool = False
    """Whether ``strategy.chosen`` is in the log."""
    chosen: str | None = None
    """The branch kept (``None``: none, or not decided yet)."""
    kept: bool = False
    """Whether the chosen branch's ``world.kept`` is in the log (its world is the run's)."""


@dataclass
class Usage:
    """Tokens and money spent."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Model calls whose price was unknown (their cost is not in ``cost_usd``)."""


@dataclass
class SessionState:
    """A run's session folded from its events, up to ``head``.

    ``usage`` counts the whole session, a fork's inherited history included;
    ``own_usage`` counts only the run's own events, which is what its registry row
    reports.
    """

    run_id: str | None = None
    head: int = -1
    """The seq of the last event folded in."""
    status: RunStatus = "queued"
    objective: str = ""
    model: str = ""
    world: str = ""
    parent: ForkPoint | None = None
    turn: int = 0
    """The current (or last) turn number."""
    in_turn: bool = False
    """True between ``turn.started`` and ``turn.ended``."""
    messages: list[Message] = field(default_factory=list[Message])
    turn_message_ends: dict[int, int] = field(default_factory=dict[int, int])
    """How many messages the conversation held when each turn ended, by turn."""
    context_summary: str | None = None
    """The latest ``context.compacted`` summary: requests send it in place of the first
    ``compacted_messages`` messages (but the objective); ``None``: nothing compacted."""
    compacted_messages: int = 0
    compacted_upto_turn: int = 0
    """The last turn the summary stands for (0: none)."""
    pending_calls: dict[str, CallRequest] = field(default_factory=dict[str, CallRequest])
    """Calls the model asked for that have no result yet, by call id."""
    running_calls: set[str] = field(default_factory=set[str])
    """Calls that started executing and have no result yet."""
    interrupted_calls: set[str] = field(default_factory=set[str])
    """Calls that were running when the process died and have no result yet."""
    pending_approvals: dict[str, PendingApproval] = field(
        default_factory=dict[str, PendingApproval]
    )
    awaiting_model: bool = False
    """A model call was sent and has not returned or failed for good."""
    steering: list[str] = field(default_factory=list[str])
    """Steering messages received since the last model call."""
    usage: Usage = field(default_factory=Usage)
    own_usage: Usage = field(default_factory=Usage)
    usage_by_model: dict[str, Usage] = field(default_factory=dict[str, Usage])
    """The run's own spend per ``provider:model`` (a fallback chain may use several)."""
    current_model: str | None = None
    """The ``provider:model`` of the model call in flight or last made."""
    summary: str | None = None
    error: str | None = None
    children: list[str] = field(default_factory=list[str])
    children_by_call: dict[str, str] = field(default_factory=dict[str, str])
    """The child run each ``delegate`` call started, by call id."""
    children_reported: set[str] = field(default_factory=set[str])
    """Children whose ``agent.reported`` is in the log."""
    delegated_usd: float = 0.0
    """What the run's own children reported spending (it counts against its budget)."""
    budget: Budget | None = None
    """The caps in force: from ``run.created``, raised by ``run.resumed``."""
    pause_reason: str | None = None
    """Why the run is paused (``user``, ``budget``, ``max_turns``…), while it is."""
    over_budget: str | None = None
    """Which budget the last ``budget.exceeded`` named (``run``, ``workspace:W``…), until
    the run resumes; with ``over_cap`` (``usd`` or ``tokens``): what a resume must raise."""
    over_cap: str | None = None
    turn_has_reply: bool = False
    """Whether the current turn's model call has been answered."""
    last_reply_had_calls: bool | None = None
    """Whether the last model reply asked for tools (``None`` before any reply, and after
    a reply rejected as a whole: it neither asked for tools nor ends the run)."""
    mistakes: int = 0
    """Consecutive model replies that went wrong (``model.rejected``), the latest one
    included; a turn that ends with none, and a resume after a pause, start it again."""
    mistake_turn: int | None = None
    """The turn of the latest ``model.rejected``, while ``mistakes`` counts."""
    last_mistake: str | None = None
    """The latest rejection's ``detail``, while ``mistakes`` counts."""
    turn_calls: set[str] = field(default_factory=set[str])
    """The current turn's calls (by id) not rejected as the model's mistake, so far."""
    tool_called: bool = False
    """Whether the model has made a call that was not rejected as its mistake
    (``model.rejected``), in a turn that ended: what a forced tool choice waits for. A
    call refused by a policy or a person counts (the model did call); a fork keeps its
    parent's (the call is in its conversation)."""
    approval_calls: dict[str, str] = field(default_factory=dict[str, str])
    """call id → approval request id, for calls that asked."""
    approved_calls: set[str] = field(default_factory=set[str])
    """Calls whose approval was granted and that have not started yet."""
    denied_calls: dict[str, str] = field(default_factory=dict[str, str])
    """call id → reason, for calls refused (by a gate or a person) without a result yet."""
    turn_files: set[str] = field(default_factory=set[str])
    """Paths tools reported changing (``file.changed``) in the current turn."""
    components: dict[str, str] = field(default_factory=dict[str, str])
    """Every UI component shown: id → its kind."""
    cards: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    """The props of every options card shown, by component id."""
    pending_choices: dict[str, PendingChoice] = field(default_factory=dict[str, PendingChoice])
    """Options cards waiting for a choice, by component id."""
    choice_calls: dict[str, str] = field(default_factory=dict[str, str])
    """call id → component id, for ``ask_choice`` calls that showed their card."""
    choices_made: dict[str, ChoiceMade] = field(default_factory=dict[str, ChoiceMade])
    """component id → what closed its wait, for answered (or closed) cards."""
    plan: dict[str, Any] | None = None
    """A graph run's plan (``graph.planned``); ``None`` for any other run."""
    tasks: dict[str, TaskState] = field(default_factory=dict[str, TaskState])
    """A graph run's tasks by id, in the plan's order."""
    started_at: str | None = None
    """When the run was created (its wall-clock budget counts from here)."""
    created_by: str | None = None
    """Who made the run: the actor of its ``run.created`` (of ``run.forked``, for a fork)."""
    strategy: StrategyProgress | None = None
    """A strategy run's progress (``strategy.branched`` on); ``None`` for any other run."""
    live: LiveState = field(default_factory=LiveState)
    """The run's live world: its background processes, and an image to restore from."""

    @property
    def spent_usd(self) -> float:
        """What counts against the run's budget: its own model calls and its children's."""
        return self.own_usage.cost_usd + self.delegated_usd

    @property
    def at_turn_boundary(self) -> bool:
        """Whether the session is between turns (a fork may start here)."""
        return not self.in_turn

    def copy(self) -> SessionState:
        """Return an independent copy (folding more into it leaves this one alone)."""
        return copy.deepcopy(self)
