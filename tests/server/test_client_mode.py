"""The CLI against a server: same commands, same output, same exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helix.providers import Scenario
from helix.testing import MockModelServer
from tests.e2e._terminal import Terminal

from .conftest import MODEL, WAIT_S, Cli, free_port, play, wait_until


class Client:
    """``helix`` with a HELIX_HOME of its own: nothing local is used."""

    def __init__(self, cli: Cli, tmp_path: Path, **env: str) -> None:
        self.env = {**cli.env, "HELIX_HOME": str(tmp_path / "client-home"), **env}

    def __call__(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "helix", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=WAIT_S,
        )

    def ok(self, *args: str, stdin: str = "") -> str:
        result = self(*args, stdin=stdin)
        assert result.returncode == 0, f"helix {' '.join(args)}: {result.stderr}"
        return result.stdout


@pytest.fixture
def server_url(cli: Cli) -> str:
    added = cli("users", "add", "alice", "--password-stdin", stdin="alice-password\n")
    assert added.returncode == 0, added.stderr
    port = free_port()
    cli.serve(port)
    return f"http://127.0.0.1:{port}"


def test_an_unreachable_server_exits_4(cli: Cli, tmp_path: Path) -> None:
    client = Client(cli, tmp_path, HELIX_SERVER="http://127.0.0.1:1")
    for args in (["runs"], ["status"], ["show", "run_x"], ["approve", "run_x"]):
        result = client(*args)
        assert result.returncode == 4, (args, result.stderr)
        assert "cannot reach the server at http://127.0.0.1:1" in result.stderr


def test_login_then_run_show_logs_export_import(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    client = Client(cli, tmp_path)
    wrong = client("login", server_url, "--user", "alice", "--password-stdin", stdin="nope\n")
    assert wrong.returncode == 1
    assert "wrong username or password" in wrong.stderr
    logged = client.ok("login", server_url, "--user", "alice", "--password-stdin",
                       stdin="alice-password\n")  # fmt: skip
    assert f"logged in to {server_url} as alice" in logged
    saved = json.loads((tmp_path / "client-home" / "server.json").read_text())
    assert saved["token"].startswith("hx_")
    assert (tmp_path / "client-home" / "server.json").stat().st_mode & 0o777 == 0o600

    play(
        model_server,
        {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "All tidy."},
    )
    ran = client("run", "tidy up", "--model", MODEL, "--json")
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in ran.stdout.splitlines()]
    assert events[0]["type"] == "run.created"
    assert events[-1]["type"] == "run.completed"
    run_id = events[0]["run_id"]
    assert [e["seq"] for e in events] == list(range(len(events)))

    shown = json.loads(client.ok("show", run_id, "--json"))
    assert shown["status"] == "completed"
    assert shown["workspace"] == "alice"
    assert "status     completed" in client.ok("show", run_id)
    assert json.loads(client.ok("runs", "--json"))["id"] == run_id
    assert run_id[:12] in client.ok("runs")  # short: a unique prefix, which works as the id
    logged_events = [json.loads(line) for line in client.ok("logs", run_id, "--json").splitlines()]
    assert logged_events == events
    assert "run.completed" in client.ok("logs", run_id)

    replayed = json.loads(client.ok("replay", run_id, "--json"))
    assert (replayed["status"], replayed["turn"], replayed["summary"]) == (
        "completed",
        2,
        "All tidy.",
    )
    halfway = json.loads(client.ok("replay", run_id, "--to", "3", "--json"))
    assert halfway["head"] == 3
    replayed_text = client.ok("replay", run_id)
    assert "● All tidy." in replayed_text  # the session as it was shown, from the server
    assert "completed · 2 turns" in replayed_text
    assert client("replay", "run_nope").returncode == 3

    exported = client.ok("export", run_id)
    assert exported.splitlines() == ran.stdout.splitlines()
    copy = json.loads(client.ok("import", "-", "--as", "copy-1", "--json", stdin=exported))
    assert copy == {
        "id": "copy-1",
        "status": "completed",
        "events": len(events),
        "original_id": None,
    }
    clash = client("import", "-", "--as", "copy-1", stdin=exported)
    assert clash.returncode == 1
    assert "--as NEW_ID" in clash.stderr

    status = client.ok("status")
    assert f"server     {server_url}  (ok" in status
    assert "user       alice  (alice: owner)" in status
    assert "active     0 runs" in status

    missing = client("show", "run_nope")
    assert missing.returncode == 3
    assert "does not exist" in missing.stderr
    finished = client("steer", run_id, "hello")
    assert finished.returncode == 1
    assert "completed" in finished.stderr
    nothing = client("approve", run_id)
    assert nothing.returncode == 1
    bad_dir = client("run", "x", "--model", MODEL, "--dir", "/etc")
    assert bad_dir.returncode == 2
    bad_model = client("run", "x", "--model", "nonsense")
    assert bad_model.returncode == 2


def _with_token(cli: Cli, tmp_path: Path, server_url: str) -> Client:
    """A client that names its server and an API token of alice's in its environment."""
    token = cli("tokens", "create", "--user", "alice").stdout.strip()
    return Client(cli, tmp_path, HELIX_SERVER=server_url, HELIX_TOKEN=token)


def test_detach_approve_from_another_terminal_and_follow(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    client = _with_token(cli, tmp_path, server_url)
    play(
        model_server,
        {
            "text": "Building.",
            "tool_calls": [{"name": "run_command", "args": {"command": "touch x"}}],
        },
        {"text": "Built."},
    )
    run_id = client.ok("run", "build", "--model", MODEL, "--detach").strip()
    assert run_id.startswith("run_")

    def asked() -> bool:
        return "approval.requested" in client.ok("logs", run_id)

    wait_until(asked, "an approval request")
    assert "waiting" in client.ok("status")
    approved = client.ok("approve", run_id)
    assert approved.startswith("allowed ")
    followed = client.ok("logs", run_id, "--follow", "--json")
    assert json.loads(followed.splitlines()[-1])["type"] == "run.completed"
    again = client("approve", run_id, approved.split()[1])
    assert again.returncode == 1


def test_a_runs_child_is_followed_in_its_output(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    client = _with_token(cli, tmp_path, server_url)
    play(
        model_server,
        {"text": "Over to you.", "tool_calls": [
            {"name": "delegate", "args": {"objective": "list the files"}}]},
        {"text": "Listing.", "tool_calls": [{"name": "list_files", "args": {}}]},
        {"text": "Nothing there."},
        {"text": "The worker found nothing."},
    )  # fmt: skip
    lines = client.ok("run", "look around", "--model", MODEL).splitlines()
    spawned = next(i for i, line in enumerate(lines) if "delegated to run_" in line)
    child = [line for line in lines[spawned + 1 :] if line.startswith("│")]
    assert any(line.startswith("│ ✓ list_files") for line in child)
    assert "│ ● Nothing there." in child
    after_child = lines[spawned + 1 + len(child) :]
    assert after_child[0].startswith("✓ delegate list the files")  # the call, with its report
    assert "● The worker found nothing." in after_child
    assert any(line.startswith("completed · 2 turns") for line in after_child)


def test_status_without_a_server_shows_the_embedded_store(cli: Cli, tmp_path: Path) -> None:
    client = Client(cli, tmp_path)
    shown = client.ok("status")
    assert "embedded   sqlite:///" in shown
    assert "active     0 runs" in shown


def test_the_world_commands_and_spend_go_through_the_server(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    """``files|diff|rollback|compare`` and ``spend`` read the server's runs, not a store here."""
    client = Client(cli, tmp_path)
    client.ok("login", server_url, "--user", "alice", "--password-stdin", stdin="alice-password\n")
    play(
        model_server,
        {"text": "Writing.", "tool_calls": [
            {"name": "write_file", "args": {"path": "notes.txt", "content": "hi\n"}}]},
        {"text": "Written."},
    )  # fmt: skip
    ran = client("run", "write a note", "--model", MODEL, "--auto-approve", "--json")
    assert ran.returncode == 0, ran.stderr
    run_id = json.loads(ran.stdout.splitlines()[0])["run_id"]

    listed = [json.loads(line) for line in client.ok("files", run_id, "--json").splitlines()]
    assert [(f["path"], f["kind"], f["size"]) for f in listed] == [("notes.txt", "file", 3)]
    assert client.ok("files", run_id, "notes.txt") == "hi\n"
    assert client.ok("files", run_id, "--turn", "start") == ""
    assert "+hi" in client.ok("diff", run_id)
    assert "(their worlds are the same)" in client.ok("compare", run_id, run_id)
    rolled = client.ok("rollback", run_id, "--to", "start")
    assert f"rolled {run_id} back to its start: 0 restored, 1 removed" in rolled
    assert client.ok("files", run_id) == ""
    missing = client("files", "run_nope")
    assert missing.returncode == 3

    *rows, total = (json.loads(line) for line in client.ok("spend", "--json").splitlines())
    assert [row["model"] for row in rows] == [MODEL]
    assert total["runs"] == 1
    assert total["input_tokens"] > 0

    # The SDK reads the same saved login: `helix login` once, then Client.from_env().
    from helix import Client as Sdk

    with Sdk.from_env({"HELIX_HOME": str(tmp_path / "client-home")}) as sdk:
        assert sdk.get(run_id).status == "completed"


def test_ctrl_c_leaves_a_run_the_server_drives_going(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    client = Client(cli, tmp_path)
    client.ok("login", server_url, "--user", "alice", "--password-stdin", stdin="alice-password\n")
    play(
        model_server,
        {"text": "Taking a moment.", "held": True, "tool_calls": [
            {"name": "list_files", "args": {}}]},
        {"text": "Finished on the server."},
    )  # fmt: skip
    terminal = Terminal(["run", "take a moment", "--model", MODEL], client.env)
    try:
        terminal.wait_for("thinking (turn 1)", WAIT_S)
        terminal.interrupt()
        assert terminal.finish(WAIT_S) == 130
    finally:
        terminal.close()
        model_server.release()
    text = terminal.text
    run_id = text.split("▶ ", 1)[1].split()[0]
    assert f"run {run_id} is running, driven by its driver (a server" in " ".join(text.split())
    assert f"follow it: helix logs {run_id} --follow" in text
    assert "Ctrl-C to leave" in text  # not "to pause": the server drives it
    assert "Traceback" not in terminal.raw
    followed = client.ok("logs", run_id, "--follow")  # it went on without this terminal
    assert "run.completed" in followed.splitlines()[-1]
    assert json.loads(client.ok("show", run_id, "--json"))["status"] == "completed"


def test_a_task_graph_from_the_command_line_against_a_server(
    cli: Cli, tmp_path: Path, server_url: str, model_server: MockModelServer
) -> None:
    client = Client(cli, tmp_path)
    client.ok("login", server_url, "--user", "alice", "--password-stdin",
              stdin="alice-password\n")  # fmt: skip
    model_server.play(Scenario.of({"text": "not json"}, repeat=True))
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"model: {MODEL}\ntasks:\n"
        "  - {id: count, objective: count, report: {type: integer}}\n"
        "  - {id: use, objective: use it, depends_on: [count]}\n"
    )
    started = client("graph", "run", str(plan), "--detach", "--json")
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["id"]
    wait_until(
        lambda: "task_failed: count" in client.ok("graph", "show", run_id), "the failed task"
    )
    shown = json.loads(client.ok("graph", "show", run_id, "--json"))
    assert shown["run"]["workspace"] == "alice"
    assert [t["status"] for t in shown["tasks"]] == ["failed", "pending"]
    model_server.play(Scenario.of({"text": "12"}, repeat=True))
    retried = client("graph", "retry", run_id, "count")
    assert retried.returncode == 0, retried.stderr  # the server drives it on
    wait_until(
        lambda: json.loads(client.ok("show", run_id, "--json"))["status"] == "completed",
        "the graph to complete",
    )
    shown = json.loads(client.ok("graph", "show", run_id, "--json"))
    assert [t["report"] for t in shown["tasks"]] == [12, "12"]
    assert client("graph", "retry", run_id, "nope").returncode == 3
    cyclic = tmp_path / "cyclic.yaml"
    cyclic.write_text(f"model: {MODEL}\ntasks: [{{id: a, objective: a, depends_on: [a]}}]\n")
    refused = client("graph", "run", str(cyclic))
    assert refused.returncode == 2
    assert "depends on itself" in refused.stderr
