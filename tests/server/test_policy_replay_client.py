"""``helix policy replay`` in client mode: the server judges, the CLI prints the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helix.testing import MockModelServer

from .conftest import MODEL, Cli, free_port, play
from .test_client_mode import Client


@pytest.fixture
def server_url(cli: Cli) -> str:
    added = cli("users", "add", "alice", "--password-stdin", stdin="alice-password\n")
    assert added.returncode == 0, added.stderr
    port = free_port()
    cli.serve(port)
    return f"http://127.0.0.1:{port}"


def test_policy_replay_through_the_server(
    cli: Cli,
    tmp_path: Path,
    server_url: str,
    model_server: MockModelServer,
) -> None:
    client = Client(cli, tmp_path)
    client.ok("login", server_url, "--user", "alice", "--password-stdin", stdin="alice-password\n")
    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "All tidy."},
    )
    ran = client("run", "tidy up", "--model", MODEL, "--json")
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout.splitlines()[0])["run_id"]
    policy = tmp_path / "ceiling.json"
    policy.write_text(json.dumps({"policy": {"deny_tools": ["list_files"]}}))

    lines = client.ok("policy", "replay", run_id, "--policy", str(policy), "--json").splitlines()
    difference, summary = (json.loads(line) for line in lines)
    assert (difference["tool"], difference["logged"], difference["candidate"]) == (
        "list_files", "allow", "deny"
    )  # fmt: skip
    assert summary == {
        "kind": "summary", "run_id": run_id, "calls": 1, "stricter": 1, "looser": 0, "unjudged": 0,
    }  # fmt: skip
    table = client.ok("policy", "replay", "--workspace", "alice", "--policy", str(policy))
    assert f"{run_id}: 1 calls judged, 1 stricter, 0 looser" in table
    unknown = client("policy", "replay", "run_nope", "--policy", str(policy))
    assert unknown.returncode == 3
    elsewhere = client("policy", "replay", "--workspace", "bob", "--policy", str(policy))
    assert elsewhere.returncode == 3
