"""Runs through the real ``helix`` command, seen from the sandbox's side: the tier
and why, egress decisions in the log, a refused minimum tier, secrets kept out."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import MODEL, Helix, of_type


def _blueprint(helix: Helix, text: str) -> Path:
    path = helix.tmp / "blueprint.yaml"
    path.write_text(text)
    return path


@pytest.mark.usefixtures("bwrap_available")
def test_a_command_reaches_only_listed_hosts_and_each_attempt_is_logged(
    helix: Helix, web: int
) -> None:
    fetch = (
        "import urllib.request as u\n"
        f"print(u.urlopen('http://127.0.0.1:{web}/').read().decode())\n"
        "try:\n"
        "    u.urlopen('http://blocked.test/')\n"
        "except Exception as error:\n"
        "    print('refused', error.code)\n"
    )
    (helix.world / "fetch.py").write_text(fetch)
    helix.play(
        {
            "text": "Fetching.",
            "tool_calls": [{"name": "run_command", "args": {"command": "python3 fetch.py"}}],
        },
        {"text": "Done."},
    )
    blueprint = _blueprint(
        helix, "sandbox: {kind: bwrap, network: ['127.0.0.1'], deny: [blocked.test]}\n"
    )
    result = helix(
        "run", "fetch", "--model", MODEL, "--dir", str(helix.world), "--json",
        "--blueprint", str(blueprint), "--auto-approve",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = helix.logs(_run_id(result.stdout))
    (started,) = of_type(log, "tool.started")
    assert started["data"]["sandbox"] == "bwrap"
    assert started["data"]["reason"]
    call_id = started["data"]["call_id"]
    egress = [
        e["data"]
        for e in of_type(log, "gate.decided")
        if e["data"]["gate"] == "egress" and e["seq"] > started["seq"]
    ]
    assert [(d["call_id"], d["verdict"]) for d in egress] == [
        (call_id, "allow"),
        (call_id, "deny"),
    ]
    assert egress[0]["reason"].startswith(f"127.0.0.1:{web}: ")
    assert egress[1]["reason"].startswith("blocked.test:80: ")
    (completed,) = of_type(log, "tool.completed")
    assert completed["data"]["ok"] is True  # the denial refused a connection, not the call
    assert "hello from the host" in completed["data"]["output"]
    assert "refused 403" in completed["data"]["output"]
    assert log[-1]["type"] == "run.completed"


def test_a_run_refuses_to_start_below_its_minimum_tier(helix: Helix) -> None:
    blueprint = _blueprint(helix, "sandbox: {kind: docker}\n")
    result = helix(
        "run", "anything", "--model", MODEL, "--dir", str(helix.world),
        "--blueprint", str(blueprint), env={"PATH": "/usr/sbin:/sbin"},  # no docker client
    )  # fmt: skip
    assert result.returncode == 2
    assert "the sandbox must be at least 'docker'" in result.stderr
    assert "Traceback" not in result.stderr
    assert helix.ok("runs", "--json").strip() == ""  # nothing was created


def test_an_unknown_tier_in_a_blueprint_is_a_clear_error(helix: Helix) -> None:
    blueprint = _blueprint(helix, "sandbox: {kind: vm}\n")
    result = helix("run", "x", "--model", MODEL, "--blueprint", str(blueprint))
    assert result.returncode == 2
    assert "sandbox.kind" in result.stderr


def test_secrets_stay_out_of_outputs_events_logs_and_exports(helix: Helix) -> None:
    secret = "tok-e2e-0123456789abcdef"
    url_password = "pw-in-a-url-98765"
    (helix.world / "leak.txt").write_text(f"token={secret}\ndb={url_password}\n")
    helix.play(
        {
            "text": "Looking.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": "cat leak.txt; env"}},
                {"name": "read_file", "args": {"path": "leak.txt"}},
            ],
        },
        {"text": "Seen."},
    )
    env = {
        "DEPLOY_TOKEN": secret,
        "DATABASE_URL": f"postgresql://app:{url_password}@db.internal/app",
    }
    result = helix(
        "run", "look", "--model", MODEL, "--dir", str(helix.world), "--json", "--auto-approve",
        env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    run_id = _run_id(result.stdout)
    outputs = [e["data"]["output"] for e in of_type(helix.logs(run_id), "tool.completed")]
    assert len(outputs) == 2
    assert all("[redacted]" in output for output in outputs)
    exported = helix.ok("export", run_id)
    for text in (result.stdout, result.stderr, exported, helix.ok("logs", run_id)):
        assert secret not in text
        assert url_password not in text
    for request in helix.model_requests:  # the model never sees them either
        assert secret not in str(request.body)
        assert url_password not in str(request.body)


def _run_id(stdout: str) -> str:
    return str(json.loads(stdout.splitlines()[0])["run_id"])


def _fetch_run(helix: Helix, blueprint: Path) -> tuple[str, list[dict[str, Any]]]:
    """Run the fetch in the foreground, attended (its egress questions may be asked)."""
    result = helix("run", "fetch", "--model", MODEL, "--dir", str(helix.world), "--json",
                   "--blueprint", str(blueprint))  # fmt: skip
    assert result.returncode == 0, result.stderr
    run_id = _run_id(result.stdout)
    return run_id, helix.logs(run_id)


def test_a_run_that_lists_no_host_gives_commands_no_proxy(helix: Helix) -> None:
    helix.play(
        {
            "text": "Checking.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": "echo proxy=[$http_proxy]"}},
                {"name": "list_files", "args": {}},
            ],
        },
        {"text": "Done."},
    )
    result = helix(
        "run", "check", "--model", MODEL, "--dir", str(helix.world), "--json", "--auto-approve"
    )
    assert result.returncode == 0, result.stderr
    log = helix.logs(_run_id(result.stdout))
    started = of_type(log, "tool.started")
    assert [s["data"]["sandbox"] for s in started] == [started[0]["data"]["sandbox"], "none"]
    assert started[0]["data"]["reason"]
    assert started[1]["data"]["reason"] is None
    outputs = [e["data"]["output"] for e in of_type(log, "tool.completed")]
    assert outputs[0].startswith("proxy=[]\n")
    after = [e for e in of_type(log, "gate.decided") if e["seq"] > started[0]["seq"]]
    assert all(e["data"]["call_id"] != started[0]["data"]["call_id"] for e in after)


ALLOW_COMMANDS = "approvals:\n  rules: [{tool: run_command, action: allow}]"
LOCAL_ONLY = "sandbox: {network: ['127.0.0.1']}\n"


def _fetcher(helix: Helix, *urls: str, timeout_s: float = 30) -> None:
    lines = ["import urllib.request as u", f"for url in {urls!r}:", "    try:"]
    lines += [f"        print(u.urlopen(url, timeout={timeout_s}).read().decode())"]
    lines += [
        "    except Exception as error:",
        "        print('refused', getattr(error, 'code', error))",
    ]
    (helix.world / "fetch.py").write_text("\n".join(lines) + "\n")
    helix.play(
        {
            "text": "Fetching.",
            "tool_calls": [{"name": "run_command", "args": {"command": "python3 fetch.py"}}],
        },
        {"text": "Done."},
    )


@pytest.mark.usefixtures("bwrap_available")
def test_an_unlisted_host_in_an_attended_run_waits_for_a_person(helix: Helix, web: int) -> None:
    _fetcher(helix, f"http://localhost:{web}/")
    blueprint = _blueprint(helix, f"{ALLOW_COMMANDS}\n{LOCAL_ONLY}")
    running = helix.start_run("fetch", "--blueprint", str(blueprint))
    asked = running.wait_for("approval.requested")
    assert asked["data"]["name"] == "egress"
    assert asked["data"]["args"] == {"host": "localhost", "port": web}
    approved = helix("approve", running.run_id)
    assert approved.returncode == 0, approved.stderr
    assert running.finish(30) == 0, running.stderr
    log = helix.logs(running.run_id)
    (started,) = of_type(log, "tool.started")
    call_id = started["data"]["call_id"]
    ask = [e for e in of_type(log, "gate.decided") if e["seq"] > started["seq"]]
    assert [(e["data"]["call_id"], e["data"]["verdict"]) for e in ask] == [(call_id, "ask")]
    assert asked["data"]["call_id"] == call_id
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "allow"
    assert decided["data"]["auto"] is False
    (completed,) = of_type(log, "tool.completed")
    assert "hello from the host" in completed["data"]["output"]


@pytest.mark.usefixtures("bwrap_available")
def test_an_unanswered_egress_question_is_denied_at_its_deadline(helix: Helix, web: int) -> None:
    _fetcher(helix, f"http://localhost:{web}/")
    blueprint = _blueprint(helix, f"{ALLOW_COMMANDS}\n  timeout_s: 1\n{LOCAL_ONLY}")
    _, log = _fetch_run(helix, blueprint)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "deny"
    assert decided["data"]["reason"] == "no decision before the deadline"
    (completed,) = of_type(log, "tool.completed")
    assert "refused 403" in completed["data"]["output"]
    assert completed["data"]["ok"] is True
    assert log[-1]["type"] == "run.completed"


@pytest.mark.usefixtures("bwrap_available")
def test_an_unattended_run_refuses_unlisted_hosts_without_asking(helix: Helix, web: int) -> None:
    _fetcher(helix, f"http://localhost:{web}/")
    blueprint = _blueprint(helix, f"{ALLOW_COMMANDS}\n{LOCAL_ONLY}")
    started = helix(
        "run", "fetch", "--model", MODEL, "--dir", str(helix.world), "--detach", "--unattended",
        "--json", "--blueprint", str(blueprint),
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    run_id = json.loads(started.stdout)["id"]
    log: list[dict[str, object]] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        log = helix.logs(run_id)
        if log and log[-1]["type"] in ("run.completed", "run.failed"):
            break
        time.sleep(0.2)
    assert of_type(log, "approval.requested") == []
    egress = [e["data"] for e in of_type(log, "gate.decided") if e["data"]["gate"] == "egress"]
    assert egress[-1]["verdict"] == "deny"
    assert egress[-1]["reason"].startswith(f"localhost:{web}: ")
    (completed,) = of_type(log, "tool.completed")
    assert "refused 403" in completed["data"]["output"]


@pytest.mark.usefixtures("bwrap_available")
def test_a_question_left_open_by_a_command_that_gave_up_is_closed(helix: Helix, web: int) -> None:
    _fetcher(helix, f"http://localhost:{web}/", timeout_s=1)
    blueprint = _blueprint(helix, f"{ALLOW_COMMANDS}\n{LOCAL_ONLY}")
    run_id, log = _fetch_run(helix, blueprint)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "deny"
    assert decided["data"]["reason"] == "the command ended before an answer"
    (completed,) = of_type(log, "tool.completed")
    assert "refused" in completed["data"]["output"]
    assert log[-1]["type"] == "run.completed"
    assert helix.show(run_id)["status"] == "completed"


@pytest.mark.usefixtures("bwrap_available")
def test_a_question_open_when_helix_died_is_closed_on_resume(helix: Helix, web: int) -> None:
    _fetcher(helix, f"http://localhost:{web}/")
    blueprint = _blueprint(helix, f"{ALLOW_COMMANDS}\n{LOCAL_ONLY}")
    running = helix.start_run("fetch", "--blueprint", str(blueprint))
    running.wait_for("approval.requested")
    running.kill()
    resumed = helix("resume", running.run_id)
    assert resumed.returncode == 0, resumed.stderr
    log = helix.logs(running.run_id)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "deny"
    assert decided["data"]["reason"] == "the command was interrupted"
    assert [e["type"] for e in log if e["seq"] > decided["seq"]][:2] == [
        "tool.interrupted",
        "tool.completed",
    ]
    assert helix.show(running.run_id)["status"] == "completed"
