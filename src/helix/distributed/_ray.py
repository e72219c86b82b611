"""Connecting to a Ray cluster with its token authentication kept on.

Ray 2.60 authenticates every client and node with a shared token. Helix never turns
that off: the token comes from ``HELIX_RAY_TOKEN`` (or Ray's own ``RAY_AUTH_TOKEN``) and
is handed to Ray through the environment of this process and of the processes it
starts, never written into events or logs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from helix.errors import ConfigError
from helix.runtime import NodeInfo, NodeState

NODE_ID_LABEL = "ray.io/node-id"
"""The label Ray gives every node: its id."""
RAY_TOKEN_ENV = "HELIX_RAY_TOKEN"
"""The cluster's shared token (Ray's ``RAY_AUTH_TOKEN``)."""


@dataclass(frozen=True, slots=True)
class RayAddress:
    """Where a Ray cluster is: its GCS address (``HOST:PORT``) and its token."""

    address: str
    token: str

    def __repr__(self) -> str:  # the token stays out of logs and tracebacks
        return f"RayAddress(address={self.address!r}, token='***')"


def ray_environment(token: str) -> dict[str, str]:
    """The variables Ray reads in every process of ours: token auth on, no usage stats."""
    if not token or any(c.isspace() for c in token):
        raise ConfigError(f"{RAY_TOKEN_ENV} must be a non-empty token without spaces")
    return {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,
        "RAY_USAGE_STATS_ENABLED": "0",
    }


def token_from(env: Mapping[str, str]) -> str:
    """The cluster token from ``HELIX_RAY_TOKEN`` or ``RAY_AUTH_TOKEN``; ``ConfigError`` if none."""
    token = env.get(RAY_TOKEN_ENV) or env.get("RAY_AUTH_TOKEN") or ""
    if not token:
        raise ConfigError(
            f"a Ray cluster needs its token: set {RAY_TOKEN_ENV} (helix cluster up prints it)"
        )
    return token


def connect_ray(cluster: RayAddress, *, namespace: str = "helix") -> None:
    """Connect this process to the cluster as a driver (once per process; idempotent).

    Sets the token variables in this process's environment first: the workers it
    starts inherit them. Ray reads the token once, when it is first imported in a
    process, so connect before anything else in the process imports Ray.
    """
    os.environ.update(ray_environment(cluster.token))  # before Ray is first imported
    import ray  # heavy: only when a cluster is used

    if ray.is_initialized():
        return
    ray.init(
        address=cluster.address,
        namespace=namespace,
        logging_level=logging.WARNING,
        log_to_driver=False,
    )


def node_info(
    row: Mapping[str, Any],
    *,
    state: NodeState | None = None,
    runs: tuple[str, ...] = (),
    id_label: bool = True,
) -> NodeInfo:
    """A ``ray.nodes()`` row as a ``NodeInfo`` (``state``: instead of alive/dead).

    Ray's per-node ``node:ADDRESS`` resources are left out, and with ``id_label=False``
    its ``ray.io/node-id`` label (the id itself) too.
    """
    resources = {
        str(k): float(v)
        for k, v in dict(row.get("Resources") or {}).items()
        if not str(k).startswith("node:")
    }
    labels = {
        str(k): str(v)
        for k, v in dict(row.get("Labels") or {}).items()
        if id_label or k != NODE_ID_LABEL
    }
    return NodeInfo(
        id=str(row["NodeID"]),
        executor="ray",
        address=str(row.get("NodeManagerAddress", "")),
        state=state or ("alive" if row.get("Alive") else "dead"),
        resources=resources,
        labels=labels,
        runs=runs,
    )
