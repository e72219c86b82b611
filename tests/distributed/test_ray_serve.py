"""``helix serve --executor ray``: what it refuses, before anything starts, and why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PG = "postgresql://postgres@127.0.0.1:1/helix"


def _serve(
    tmp_path: Path, *args: str, db: str = PG, token: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("HELIX_RAY_TOKEN", "RAY_AUTH_TOKEN", "HELIX_EXECUTOR", "HELIX_RAY_ADDRESS")
    }
    env.update({"HELIX_HOME": str(tmp_path / "home"), "HELIX_DB": db})
    if token is not None:
        env["HELIX_RAY_TOKEN"] = token
    return subprocess.run(
        [sys.executable, "-m", "helix", "serve", "--port", "0", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "db", "token", "message"),
    [
        (("--executor", "threads"), PG, None, "choose local or ray"),
        (("--executor", "ray"), PG, "t0ken", "--ray-address HOST:PORT"),
        (("--ray-address", "10.0.0.5:6379"), PG, "t0ken", "is for --executor ray"),
        (("--executor", "ray", "--ray-address", "10.0.0.5:6379"), "sqlite:///x.db", "t0ken",
         "HELIX_DB=postgresql://"),
        (("--executor", "ray", "--ray-address", "10.0.0.5:6379"), PG, None, "HELIX_RAY_TOKEN"),
        (("--executor", "ray", "--ray-address", "10.0.0.5"), PG, "t0ken", "HOST:PORT"),
        (("--executor", "ray", "--ray-address", "10.0.0.5:6379"), PG, "a b", "without spaces"),
    ],
)  # fmt: skip
def test_serve_refuses_a_ray_executor_it_cannot_use(
    tmp_path: Path, args: tuple[str, ...], db: str, token: str | None, message: str
) -> None:
    refused = _serve(tmp_path, *args, db=db, token=token)
    assert refused.returncode != 0
    assert message in refused.stderr
    assert "Traceback" not in refused.stderr
    assert "t0ken" not in refused.stderr + refused.stdout
