"""Past one process: worker-process and Ray executors, the remote-node tier, the cluster.

Everything here imports Ray (or starts processes) only when used, so ``import helix``
and ``helix --help`` stay light. See docs/distributed.md.
"""

from ._ray import RAY_TOKEN_ENV as RAY_TOKEN_ENV
from ._ray import RayAddress as RayAddress
from ._ray import connect_ray as connect_ray
from ._ray import ray_environment as ray_environment
from ._ray_actor import Outcome as Outcome
from ._ray_actor import Placement as Placement
from ._ray_actor import RunActor as RunActor
from ._ray_executor import RayExecutor as RayExecutor
from ._ray_executor import RayRunOptions as RayRunOptions
from ._ray_executor import ray_address_of as ray_address_of
from ._ray_executor import ray_executor as ray_executor

__all__ = [
    "RAY_TOKEN_ENV",
    "Outcome",
    "Placement",
    "RayAddress",
    "RayExecutor",
    "RayRunOptions",
    "RunActor",
    "connect_ray",
    "ray_address_of",
    "ray_environment",
    "ray_executor",
]
