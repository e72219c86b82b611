"""Past one process: worker-process and Ray executors, the remote-node tier, the cluster.

Everything here imports Ray (or starts processes) only when used, so ``import helix``
and ``helix --help`` stay light. See docs/distributed.md.
"""

from ._ray import RAY_TOKEN_ENV as RAY_TOKEN_ENV
from ._ray import RayAddress as RayAddress
from ._ray import connect_ray as connect_ray
from ._ray import ray_environment as ray_environment
from ._ray_node import CACHE_ENV as CACHE_ENV
from ._ray_sandbox import NodeMatch as NodeMatch
from ._ray_sandbox import RayNodeSandbox as RayNodeSandbox
from ._ray_sandbox import RayPlacer as RayPlacer

__all__ = [
    "CACHE_ENV",
    "RAY_TOKEN_ENV",
    "NodeMatch",
    "RayAddress",
    "RayNodeSandbox",
    "RayPlacer",
    "connect_ray",
    "ray_environment",
]
