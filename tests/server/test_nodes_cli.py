"""``helix nodes`` against a server: its executor's node, the run it drives; errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import httpx

from helix.testing import MockModelServer

from .conftest import WAIT_S, Admin, LiveServer, start_asking_run, wait_for_event, wait_for_status


def _helix(live: LiveServer, token: str, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "HELIX_SERVER": live.url, "HELIX_TOKEN": token}
    env["HELIX_HOME"] = str(live.config.home.parent / "client-home")  # nothing local is used
    done = subprocess.run(
        [sys.executable, "-m", "helix", *args], env=env, capture_output=True, text=True,
        timeout=WAIT_S, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def test_nodes_through_a_server(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = start_asking_run(owner, model_server)
    wait_for_event(owner, run_id, "approval.requested")
    token = str(owner.headers["Authorization"]).removeprefix("Bearer ")
    code, out, err = _helix(live, token, "nodes", "--json")
    assert code == 0, err
    [node] = [json.loads(line) for line in out.splitlines()]
    assert (node["id"], node["runs"], node["run_count"]) == ("local", [run_id], 1)
    code, out, err = _helix(live, token, "nodes")
    assert code == 0, err
    assert out.splitlines()[1].split()[:2] == ["local", "alive"]
    assert out.splitlines()[1].split()[-2:] == ["1", "-"]

    code, _, err = _helix(live, token, "nodes", "drain", "local")
    assert code == 1
    assert "nowhere to move its runs" in err
    code, _, err = _helix(live, token, "nodes", "drain", "worker-3")
    assert (code, "node 'worker-3' does not exist" in err) == (3, True)
    admin.user("mia", workspace="default", role="member")
    code, _, err = _helix(live, admin.api_token("mia"), "nodes")
    assert code == 1
    assert "only team workspaces' owners and admins may see the nodes" in err

    request = owner.get(f"/runs/{run_id}/approvals").json()["approvals"][0]["request_id"]
    owner.post(f"/runs/{run_id}/approvals/{request}", json={"decision": "allow"})
    wait_for_status(owner, run_id, "completed")
