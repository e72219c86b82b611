"""``helix serve --executor ray``: what it refuses before anything starts, and a server
whose runs are driven by actors on the session's cluster."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from helix.accounts import Hashing
from helix.cli import main
from helix.distributed import connect_ray
from helix.providers import Scenario
from helix.server import ServerConfig
from helix.testing import MockModelServer
from tests.server.conftest import LiveServer, wait_for_status, wait_until

from .conftest import RayCluster

PG = "postgresql://postgres@127.0.0.1:1/helix"
TOKENS = ("HELIX_RAY_TOKEN", "RAY_AUTH_TOKEN")
PLACED_S = 240.0
"""A guard, not a goal: an actor's first worker process starts slowly on a loaded machine."""


def _serve(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *args: str, db: str, token: str | None
) -> int:
    """``helix serve ARGS`` in this process (the refusals come before anything starts)."""
    for name in (*TOKENS, "HELIX_EXECUTOR", "HELIX_RAY_ADDRESS", "HELIX_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HELIX_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HELIX_DB", db)
    if token is not None:
        monkeypatch.setenv("HELIX_RAY_TOKEN", token)
    monkeypatch.setattr(sys, "argv", ["helix", "serve", "--port", "0", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0)


@pytest.mark.parametrize(
    ("args", "db", "token", "message"),
    [
        (("--executor", "threads"), PG, None, "is not one of local, processes, ray"),
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
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: tuple[str, ...],
    db: str,
    token: str | None,
    message: str,
) -> None:
    code = _serve(monkeypatch, tmp_path, *args, db=db, token=token)
    said = capsys.readouterr()
    assert code == 2, said.err
    assert message in said.err
    assert "Traceback" not in said.err
    assert "t0ken" not in said.err + said.out


def test_a_server_with_the_ray_executor_drives_its_runs_on_the_cluster(
    ray_cluster: RayCluster, fresh_postgres_url: str, tmp_path: Path
) -> None:
    connect_ray(ray_cluster.address)  # from the main thread; the server's is then a no-op
    with MockModelServer() as mock:
        mock.play(Scenario.of({"text": "Done on the cluster."}))
        mock.hold()  # the run stays on its actor until the test has seen it there
        config = ServerConfig(
            db_url=fresh_postgres_url,
            home=tmp_path / "home",
            hashing=Hashing.cheap(),
            env={"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": mock.openai_base_url},
            executor="ray",
            ray_address=ray_cluster.address.address,
        )
        live = LiveServer(config).start()
        try:
            state = live.app.state.helix
            assert state.executor.kind == "ray"
            with live.client() as anonymous:
                login = anonymous.post("/auth/link", json={"token": live.bootstrap_token})
            with live.client(login.json()["token"]) as client:
                body = {"objective": "say done", "model": "openai:gpt-4.1"}
                run_id = client.post("/runs", json=body).json()["id"]
                placed = wait_until(
                    lambda: [n for n in asyncio.run(state.executor.nodes()) if run_id in n.runs],
                    "the run's actor on a node",
                    timeout=PLACED_S,
                )
                assert placed[0].executor == "ray"
                mock.release()
                done = wait_for_status(client, run_id, "completed", "failed")
                assert done["status"] == "completed"
                assert "Done on the cluster." in str(client.get(f"/runs/{run_id}/events").json())
        finally:
            live.stop()
