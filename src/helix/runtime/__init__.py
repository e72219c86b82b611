"""The runtime: the supervised run loop, the engine that drives runs, and run control."""

from ._blueprint import ApprovalSettings as ApprovalSettings
from ._blueprint import Blueprint as Blueprint
from ._blueprint import ModelPrice as ModelPrice
from ._blueprint import SamplingSettings as SamplingSettings
from ._blueprint import SandboxSettings as SandboxSettings
from ._blueprint import blueprint_of as blueprint_of
from ._candidate import CandidateApprovals as CandidateApprovals
from ._candidate import CandidateBudget as CandidateBudget
from ._candidate import CandidateEgress as CandidateEgress
from ._candidate import CandidatePolicy as CandidatePolicy
from ._choices import choose as choose
from ._clock import SYSTEM_CLOCK as SYSTEM_CLOCK
from ._clock import Clock as Clock
from ._clock import SystemClock as SystemClock
from ._control import cancel as cancel
from ._control import decide as decide
from ._control import pause as pause
from ._control import resume as resume
from ._control import steer as steer
from ._engine import Engine as Engine
from ._engine import MemoryDoors as MemoryDoors
from ._engine import WorkflowEditors as WorkflowEditors
from ._executor import EXECUTOR_KINDS as EXECUTOR_KINDS
from ._executor import EngineOpener as EngineOpener
from ._executor import Executor as Executor
from ._executor import ExecutorKind as ExecutorKind
from ._executor import Handoff as Handoff
from ._executor import LocalExecutor as LocalExecutor
from ._executor import NodeInfo as NodeInfo
from ._executor import NodeState as NodeState
from ._executor import moved as moved
from ._faults import Faults as Faults
from ._faults import InjectedFault as InjectedFault
from ._fork import fork_replacing as fork_replacing
from ._graph import GraphConductor as GraphConductor
from ._graph import approval_call as approval_call
from ._graph import retry_task as retry_task
from ._lease import HolderGone as HolderGone
from ._loop import TERMINAL as TERMINAL
from ._loop import RunLoop as RunLoop
from ._origin import run_origin as run_origin
from ._origin import run_settings as run_settings
from ._placement import Placement as Placement
from ._placement import Placer as Placer
from ._plan import Plan as Plan
from ._policy_replay import ApprovalOutcome as ApprovalOutcome
from ._policy_replay import PolicyReplay as PolicyReplay
from ._policy_replay import ReplayedCall as ReplayedCall
from ._policy_replay import UnjudgedCall as UnjudgedCall
from ._policy_replay import replay_policy as replay_policy
from ._policy_replay import replay_policy_workspace as replay_policy_workspace
from ._replies import ReplyHub as ReplyHub
from ._replies import Watcher as Watcher
from ._replies import piece_message as piece_message
from ._replies import piece_of as piece_of
from ._setup import RunSetup as RunSetup
from ._spending import OverCap as OverCap
from ._spending import SpendClaim as SpendClaim
from ._spending import Spending as Spending
from ._strategies import ChainOfThought as ChainOfThought
from ._strategies import CommandJudge as CommandJudge
from ._strategies import PlanThenAct as PlanThenAct
from ._strategies import RunJudge as RunJudge
from ._strategies import TreeOfThoughts as TreeOfThoughts
from ._streaming import DeltaSink as DeltaSink
from ._streaming import ModelDelta as ModelDelta
from ._streaming import ReplyRestart as ReplyRestart
from ._supervisor import ChildSpec as ChildSpec
from ._supervisor import Supervisor as Supervisor
from ._supervisor import open_supervisor as open_supervisor
from ._taskgraph import TaskGraph as TaskGraph
from ._taskgraph import TaskSpec as TaskSpec
from ._until import Until as Until
from ._world_control import KeepOutcome as KeepOutcome
from ._world_control import compare as compare
from ._world_control import fork_with_world as fork_with_world
from ._world_control import keep as keep
from ._world_control import rollback as rollback

__all__ = [
    "EXECUTOR_KINDS",
    "SYSTEM_CLOCK",
    "TERMINAL",
    "ApprovalOutcome",
    "ApprovalSettings",
    "Blueprint",
    "CandidateApprovals",
    "CandidateBudget",
    "CandidateEgress",
    "CandidatePolicy",
    "ChainOfThought",
    "ChildSpec",
    "Clock",
    "CommandJudge",
    "DeltaSink",
    "Engine",
    "EngineOpener",
    "Executor",
    "ExecutorKind",
    "Faults",
    "GraphConductor",
    "Handoff",
    "HolderGone",
    "InjectedFault",
    "KeepOutcome",
    "LocalExecutor",
    "MemoryDoors",
    "ModelDelta",
    "ModelPrice",
    "NodeInfo",
    "NodeState",
    "OverCap",
    "Placement",
    "Placer",
    "Plan",
    "PlanThenAct",
    "PolicyReplay",
    "ReplayedCall",
    "ReplyHub",
    "ReplyRestart",
    "RunJudge",
    "RunLoop",
    "RunSetup",
    "SamplingSettings",
    "SandboxSettings",
    "SpendClaim",
    "Spending",
    "Supervisor",
    "SystemClock",
    "TaskGraph",
    "TaskSpec",
    "TreeOfThoughts",
    "UnjudgedCall",
    "Until",
    "Watcher",
    "WorkflowEditors",
    "approval_call",
    "blueprint_of",
    "cancel",
    "choose",
    "compare",
    "decide",
    "fork_replacing",
    "fork_with_world",
    "keep",
    "moved",
    "open_supervisor",
    "pause",
    "piece_message",
    "piece_of",
    "replay_policy",
    "replay_policy_workspace",
    "resume",
    "retry_task",
    "rollback",
    "run_origin",
    "run_settings",
    "steer",
]
