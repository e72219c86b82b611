"""Past one process: worker-process and Ray executors, the remote-node tier, the cluster.

Everything here imports Ray (or starts processes) only when used, so ``import helix``
and ``helix --help`` stay light. See docs/distributed.md.
"""

from ._open import EXECUTOR_ENV as EXECUTOR_ENV
from ._open import WORKERS_ENV as WORKERS_ENV
from ._open import open_executor as open_executor
from ._open import parse_executor as parse_executor
from ._open import parse_workers as parse_workers
from ._processes import ProcessExecutor as ProcessExecutor
from ._ray import RAY_TOKEN_ENV as RAY_TOKEN_ENV
from ._ray import RayAddress as RayAddress
from ._ray import connect_ray as connect_ray
from ._ray import ray_environment as ray_environment

__all__ = [
    "EXECUTOR_ENV",
    "RAY_TOKEN_ENV",
    "WORKERS_ENV",
    "ProcessExecutor",
    "RayAddress",
    "connect_ray",
    "open_executor",
    "parse_executor",
    "parse_workers",
    "ray_environment",
]
