"""Past one process: worker-process and Ray executors, the remote-node tier, the cluster.

Everything here imports Ray (or starts processes) only when used, so ``import helix``
and ``helix --help`` stay light. See docs/distributed.md.
"""

from ._cluster import ClusterSpec as ClusterSpec
from ._cluster import cluster_down as cluster_down
from ._cluster import cluster_nodes as cluster_nodes
from ._cluster import cluster_up as cluster_up
from ._cluster import local_cluster_nodes as local_cluster_nodes
from ._cluster import parse_labels as parse_labels
from ._cluster_state import ClusterProcess as ClusterProcess
from ._cluster_state import LocalCluster as LocalCluster
from ._cluster_state import read_state as read_cluster
from ._launcher import SshPool as SshPool
from ._launcher import launcher_config as launcher_config
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
from ._ray_actor import ActorLocation as ActorLocation
from ._ray_actor import Outcome as Outcome
from ._ray_actor import RunActor as RunActor
from ._ray_executor import RayExecutor as RayExecutor
from ._ray_executor import RayRunOptions as RayRunOptions
from ._ray_executor import ray_address_of as ray_address_of
from ._ray_executor import ray_executor as ray_executor
from ._ray_node import CACHE_ENV as CACHE_ENV
from ._ray_sandbox import NodeMatch as NodeMatch
from ._ray_sandbox import RayNodeSandbox as RayNodeSandbox
from ._ray_sandbox import RayPlacer as RayPlacer

__all__ = [
    "CACHE_ENV",
    "EXECUTOR_ENV",
    "RAY_TOKEN_ENV",
    "WORKERS_ENV",
    "ActorLocation",
    "ClusterProcess",
    "ClusterSpec",
    "LocalCluster",
    "NodeMatch",
    "Outcome",
    "ProcessExecutor",
    "RayAddress",
    "RayExecutor",
    "RayNodeSandbox",
    "RayPlacer",
    "RayRunOptions",
    "RunActor",
    "SshPool",
    "cluster_down",
    "cluster_nodes",
    "cluster_up",
    "connect_ray",
    "launcher_config",
    "local_cluster_nodes",
    "open_executor",
    "parse_executor",
    "parse_labels",
    "parse_workers",
    "ray_address_of",
    "ray_environment",
    "ray_executor",
    "read_cluster",
]
