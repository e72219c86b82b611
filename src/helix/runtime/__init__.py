"""The runtime: the supervised run loop, the engine that drives runs, and run control."""

from ._blueprint import ApprovalSettings as ApprovalSettings
from ._blueprint import Blueprint as Blueprint
from ._blueprint import ModelPrice as ModelPrice
from ._blueprint import SandboxSettings as SandboxSettings
from ._blueprint import blueprint_of as blueprint_of
from ._clock import SYSTEM_CLOCK as SYSTEM_CLOCK
from ._clock import Clock as Clock
from ._clock import SystemClock as SystemClock
from ._control import cancel as cancel
from ._control import decide as decide
from ._control import pause as pause
from ._control import resume as resume
from ._control import steer as steer
from ._engine import Engine as Engine
from ._faults import Faults as Faults
from ._faults import InjectedFault as InjectedFault
from ._loop import TERMINAL as TERMINAL
from ._loop import RunLoop as RunLoop
from ._setup import RunSetup as RunSetup
from ._supervisor import ChildSpec as ChildSpec
from ._supervisor import Supervisor as Supervisor
from ._supervisor import open_supervisor as open_supervisor
from ._world_control import Kept as Kept
from ._world_control import compare as compare
from ._world_control import fork_with_world as fork_with_world
from ._world_control import keep as keep
from ._world_control import rollback as rollback

__all__ = [
    "SYSTEM_CLOCK",
    "TERMINAL",
    "ApprovalSettings",
    "Blueprint",
    "ChildSpec",
    "Clock",
    "Engine",
    "Faults",
    "InjectedFault",
    "Kept",
    "ModelPrice",
    "RunLoop",
    "RunSetup",
    "SandboxSettings",
    "Supervisor",
    "SystemClock",
    "blueprint_of",
    "cancel",
    "compare",
    "decide",
    "fork_with_world",
    "keep",
    "open_supervisor",
    "pause",
    "resume",
    "rollback",
    "steer",
]
