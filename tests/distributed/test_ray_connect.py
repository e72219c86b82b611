"""Connecting to the session's Ray cluster with its token; without it, refused."""

from __future__ import annotations

import pytest

from helix.distributed import RayAddress, connect_ray, ray_environment
from helix.errors import ConfigError

from .conftest import RayCluster


def test_connects_with_token_and_sees_both_nodes(ray_cluster: RayCluster) -> None:
    import ray

    connect_ray(ray_cluster.address)
    alive = [n for n in ray.nodes() if n["Alive"]]
    roles = {n["Labels"].get("helix.role", "") for n in alive}
    assert {"head", "worker"} <= roles


def test_token_is_not_in_repr() -> None:
    assert "s3cret" not in repr(RayAddress("127.0.0.1:6379", "s3cret"))


@pytest.mark.parametrize("token", ["", "a b"])
def test_a_bad_token_is_a_config_error(token: str) -> None:
    with pytest.raises(ConfigError):
        ray_environment(token)
