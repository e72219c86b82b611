"""Every error Helix raises on purpose, in one tree.

Callers catch the branch they can handle; surfaces (CLI, server) map branches to exit
codes and HTTP statuses, so a user always gets a precise message instead of a trace::

    HelixError
    ├── ConfigError              a setting is malformed or points somewhere unusable
    │   ├── ModelNameError       not ``provider:model``, or an unknown provider
    │   ├── MissingKeyError      the provider's API key variable is not set
    │   ├── BlueprintError       a blueprint file is malformed (file, field, reason)
    │   ├── PolicyError          a candidate policy file is malformed (file, field, reason)
    │   ├── PluginError          a plugin breaks its contract, or a run names one it cannot have
    │   ├── InvalidAnswerError   an answer to a question does not fit its schema
    │   ├── WorkflowError        a workflow definition or edit is malformed (field, reason)
    │   ├── MemoryInputError     a memory, an artifact or an import of them is malformed
    │   └── ScenarioError        a scripted scenario file does not parse
    ├── StoreUnavailableError    the event store cannot be opened or reached
    │   └── StoreDamagedError    its file or a stored row is damaged (cannot be read back)
    ├── NotFoundError
    │   ├── RunNotFoundError     no run with that id (in this workspace)
    │   ├── ComponentNotFoundError  no UI component with that id in the run
    │   ├── NotAGraphError       the run is not a task graph (it has no tasks)
    │   ├── TaskNotFoundError    the task graph has no task with that id
    │   ├── NodeNotFoundError    no node with that id in the executor's cluster
    │   ├── WorkflowNotFoundError  no workflow (or version) with that name in the workspace
    │   └── MemoryNotFoundError  no memory or artifact with that id or name in the scope
    ├── AmbiguousRunError        a run id prefix names several runs (a usage error)
    ├── ConflictError
    │   ├── SeqConflictError     an append's expected seq is not the log's next seq
    │   ├── RunExistsError       a run with that id already exists
    │   ├── NodeStateError       the node cannot do that now (drain the only node, …)
    │   └── WorkflowConflictError  a workflow saved on top of a version that is not its latest
    ├── InvalidEventError        an event is refused before anything is written
    │   ├── UnknownEventTypeError
    │   └── InvalidPayloadError
    ├── ForkError                the fork point is past the head or not a turn boundary
    ├── RunStateError            the run cannot do that now (steer a finished run, …)
    │   ├── ApprovalClosedError  the approval was already decided, or expired
    │   ├── ChoiceClosedError    the options card was already answered, or waits for nothing
    │   ├── LeaseHeldError       another driver holds the run's lease
    │   └── LeaseLostError       a driver's lease was taken over: its appends are refused
    ├── UnknownToolError         a blueprint or a model named a tool that does not exist
    ├── InvalidToolArgumentsError  a tool call's arguments fail the tool's schema
    ├── ToolSourceError          a run's tool source (MCP server, plugin) cannot start
    │   └── SamplingRefusedError  a source's sampling request was refused (says why)
    ├── MemoryDeniedError        the person may not read or write that scope (a viewer, …)
    ├── InvalidComponentError    a UI component's props fail its schema (or its kind is unknown)
    ├── InvalidChoiceError       a choice that is not one of the options card's
    ├── AppendOnlyError          something tried to change or delete a stored event
    ├── InvalidObjectError       a world object's name is no digest, or it is not a manifest
    ├── SubscriptionOverflowError  a subscriber fell too far behind to be caught up
    │   └── SubscriptionGapError  live events may have been missed (a dropped LISTEN)
    └── ModelCallError           a model call failed (after any retries)
        ├── ModelRateLimitedError    429: retried, honouring Retry-After
        ├── ModelUnavailableError    5xx, timeouts, refused connections: retried
        ├── ModelAuthError           401/403: fails fast, names the variable to set
        └── ModelRequestError        any other 4xx: the request itself is wrong
"""

from __future__ import annotations


class HelixError(Exception):
    """Base of every error Helix raises deliberately."""

    code = "helix_error"
    """A stable, machine-readable name for the error (used in API error bodies)."""


class ConfigError(HelixError):
    """A setting (environment variable, URL, option) is malformed or unusable."""

    code = "invalid_config"


class StoreUnavailableError(HelixError):
    """The event store cannot be opened or reached."""

    code = "store_unavailable"


class StoreDamagedError(StoreUnavailableError):
    """The event store's file, or a row in it, is damaged: it cannot be read back."""

    code = "store_damaged"


class NotFoundError(HelixError):
    """The thing asked for does not exist, or is not visible to the caller."""

    code = "not_found"


class RunNotFoundError(NotFoundError):
    """No run with this id exists."""

    code = "run_not_found"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} does not exist")
        self.run_id = run_id


class AmbiguousRunError(HelixError):
    """A run id prefix starts the ids of several runs the caller may see.

    A usage error (exit 2, HTTP 400 ``ambiguous_run_id``): give more of the id.
    """

    code = "ambiguous_run_id"

    def __init__(self, prefix: str, candidates: list[str], more: bool = False) -> None:
        listed = ", ".join(candidates) + (", …" if more else "")
        super().__init__(f"run id {prefix!r} is ambiguous: it starts {listed}; give more of the id")
        self.prefix = prefix
        self.candidates = candidates
        """Full ids of some of the runs it names (a few, in id order)."""


class ConflictError(HelixError):
    """The request contradicts the current state; retrying blindly will not help."""

    code = "conflict"


class SeqConflictError(ConflictError):
    """An append expected a different next seq than the log has.

    This is the log's optimistic-concurrency check: two writers racing on one run
    cannot both win, and the loser learns where the log really is.
    """

    code = "seq_conflict"

    def __init__(self, run_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"run {run_id!r}: append expected next seq {expected}, but the log's next seq is"
            f" {actual}"
        )
        self.run_id = run_id
        self.expected = expected
        self.actual = actual


class RunExistsError(ConflictError):
    """A run with this id already exists."""

    code = "run_exists"

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} already exists")
        self.run_id = run_id


class InvalidEventError(HelixError):
    """An event was refused before anything was written."""

    code = "invalid_event"


class UnknownEventTypeError(InvalidEventError):
    """The event's type is not in the vocabulary."""

    code = "unknown_event_type"

    def __init__(self, event_type: str) -> None:
        super().__init__(f"unknown event type {event_type!r}")
        self.event_type = event_type


class InvalidPayloadError(InvalidEventError):
    """The event's data does not match its type's schema."""

    code = "invalid_payload"


class ForkError(HelixError):
    """A fork was asked for at a point where a run cannot be forked."""

    code = "invalid_fork_point"


class AppendOnlyError(HelixError):
    """Something tried to change or delete a stored event."""

    code = "append_only"


class InvalidObjectError(HelixError):
    """A world object is named by something other than a SHA-256 digest, or is misread.

    Misread: a stored object read as a manifest does not hold one.
    """

    code = "invalid_object"


class SubscriptionOverflowError(HelixError):
    """A subscriber fell too far behind and asked to be told rather than caught up."""

    code = "subscription_overflow"

    def __init__(self, cursors: dict[str, int]) -> None:
        super().__init__("subscriber fell behind; resume from the given cursors")
        self.cursors = cursors
        """Last seq delivered per run id, to resume from."""


class SubscriptionGapError(SubscriptionOverflowError):
    """Live events of every run may have been missed: the store's feed was interrupted.

    The feed of other processes' appends: a PostgreSQL listening connection dropped.
    """

    code = "subscription_gap"

    def __init__(self, cursors: dict[str, int]) -> None:
        super().__init__(cursors)
        self.args = ("the store's live feed was interrupted; resume from the given cursors",)


class ModelNameError(ConfigError):
    """A model name is not ``provider:model``, or names an unknown provider."""

    code = "invalid_model"


class MissingKeyError(ConfigError):
    """The provider needs an API key and its variable is not set."""

    code = "missing_api_key"

    def __init__(self, provider: str, variable: str) -> None:
        super().__init__(f"{provider} needs an API key: set {variable}")
        self.provider = provider
        self.variable = variable


class ScenarioError(ConfigError):
    """A scripted-model scenario file cannot be read or does not parse."""

    code = "invalid_scenario"


class ModelCallError(HelixError):
    """A model call failed.

    ``retryable`` says whether trying again may help; ``retry_after`` is the delay the
    provider asked for, in seconds, when it gave one; ``complaint`` is the provider's
    own message in an HTTP error's body, when it gave one. Messages never hold secrets.
    """

    code = "model_call_failed"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
        complaint: str | None = None,
    ) -> None:
        if not message.strip():  # a log line must say something: the kind, the status
            status_text = f" (HTTP {status})" if status else ""
            message = f"{type(self).__name__} from {provider}{status_text}: no detail given"
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        self.complaint = complaint


class ModelRateLimitedError(ModelCallError):
    """The provider answered 429: too many requests."""

    code = "model_rate_limited"
    retryable = True


class ModelUnavailableError(ModelCallError):
    """A 5xx answer, a timeout or a refused connection."""

    code = "model_unavailable"
    retryable = True


class ModelAuthError(ModelCallError):
    """The provider refused the credentials (401) or the access (403)."""

    code = "model_auth_failed"


class ModelRequestError(ModelCallError):
    """The provider refused the request itself (400, 404, 422, …)."""

    code = "model_request_invalid"


class UnknownToolError(HelixError):
    """A blueprint or a model named a tool that is not registered."""

    code = "unknown_tool"


class InvalidToolArgumentsError(HelixError):
    """A tool call's arguments do not match the tool's schema."""

    code = "invalid_tool_arguments"


class ToolSourceError(HelixError):
    """A run's tool source (an MCP server, a plugin) could not be opened; says which, why."""

    code = "tool_source_failed"


class InvalidComponentError(HelixError):
    """A UI component is unknown, or its props fail its kind's schema (says which field)."""

    code = "invalid_component"


class InvalidChoiceError(HelixError):
    """A choice that is not one of the options card's (names the ones it has)."""

    code = "invalid_choice"


class SamplingRefusedError(ToolSourceError):
    """A source's sampling request was refused (policy, a person, the budget); says why."""

    code = "sampling_refused"


class InvalidAnswerError(ConfigError):
    """An answer to a question does not match the question's schema; says which field."""

    code = "invalid_answer"


class BlueprintError(ConfigError):
    """A blueprint file does not parse or does not validate."""

    code = "invalid_blueprint"


class PolicyError(ConfigError):
    """A candidate policy (``helix policy replay``) does not parse or does not validate."""

    code = "invalid_policy"


class PluginError(ConfigError):
    """A plugin breaks its contract, or a run names a plugin it cannot have.

    The message says which plugin, which capability and what is wrong; or that the
    plugin a blueprint names is unknown, disabled or inactive (and why).
    """

    code = "invalid_plugin"


class RunStateError(ConflictError):
    """The run is in a state where this cannot be done (e.g. steering a finished run)."""

    code = "invalid_run_state"


class LeaseHeldError(RunStateError):
    """Another driver holds the run's lease, and it has not expired."""

    code = "lease_held"

    def __init__(self, run_id: str, holder: str, expires_at: float) -> None:
        # The holder (host/pid) stays an attribute: the message may reach API clients.
        super().__init__(f"run {run_id!r} is being driven by another process")
        self.run_id = run_id
        self.holder = holder
        self.expires_at = expires_at


class LeaseLostError(RunStateError):
    """A driver's lease is no longer the run's: another driver took it over (fencing).

    Raised by an append or a renewal made with a stale lease; nothing is written. The
    driver that gets it must stop: the run is someone else's now.
    """

    code = "lease_lost"

    def __init__(self, run_id: str, epoch: int, current: int) -> None:
        super().__init__(
            f"run {run_id!r}: this driver's lease (epoch {epoch}) was taken over (epoch"
            f" {current}): another process drives the run now"
        )
        self.run_id = run_id
        self.epoch = epoch
        self.current = current


class ApprovalClosedError(RunStateError):
    """The approval request was already decided, or its deadline passed."""

    code = "approval_closed"


class ChoiceClosedError(RunStateError):
    """The options card was already answered, waits for no choice, or its run has ended."""

    code = "choice_closed"


class ComponentNotFoundError(NotFoundError):
    """No UI component with this id was shown in the run."""

    code = "component_not_found"


class NotAGraphError(NotFoundError):
    """The run is not a task graph: it has no graph and no tasks (docs/graphs.md)."""

    code = "not_a_graph"


class TaskNotFoundError(NotFoundError):
    """The task graph has no task with this id."""

    code = "task_not_found"


class NodeNotFoundError(NotFoundError):
    """No node with this id drives runs for the executor (``helix nodes``)."""

    code = "node_not_found"

    def __init__(self, node_id: str) -> None:
        super().__init__(f"node {node_id!r} does not exist (helix nodes lists them)")
        self.node_id = node_id


class NodeStateError(ConflictError):
    """The node cannot do that now (drain the only node, drain a dead one)."""

    code = "invalid_node_state"


class WorkflowError(ConfigError):
    """A workflow definition, its YAML or an edit of it is malformed (field, reason)."""

    code = "invalid_workflow"


class WorkflowNotFoundError(NotFoundError):
    """No workflow (or no such version of it) with that name in the workspace."""

    code = "workflow_not_found"


class WorkflowConflictError(ConflictError):
    """A save named a base version that is no longer the workflow's latest (reload, redo)."""

    code = "stale_workflow_version"


class MemoryInputError(ConfigError):
    """A memory, an artifact or an import of them is malformed (too long, a bad name…)."""

    code = "invalid_memory"


class MemoryNotFoundError(NotFoundError):
    """No memory (by id) or artifact (by name, version) in the scope."""

    code = "memory_not_found"


class MemoryDeniedError(HelixError):
    """The person may not do that in that scope (HTTP 403, CLI exit 1).

    A viewer writing workspace memory; a run with no person reading personal memory.
    """

    code = "memory_denied"
