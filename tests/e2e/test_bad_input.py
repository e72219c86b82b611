"""Bad input: a clear message and the right exit code, never a traceback or a crashed run."""

from __future__ import annotations

import time

import pytest

from .conftest import MODEL, Helix, of_type, types


def _run(helix: Helix, *extra: str) -> tuple[int, str]:
    result = helix("run", "do it", "--dir", str(helix.world), *extra)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stderr


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("broken.yaml", "approvals: {timeout_s: 1\n", "does not parse: "),
        ("extra.yaml", "approvals:\n  timeout_s: 1\n  nagging: true\n", "approvals.nagging: "),
        ("zero.toml", "[approvals]\ntimeout_s = 0\n", "approvals.timeout_s: "),
        ("tools.yaml", "tools: [read_file, teleport]\n", "tools.1: unknown tool 'teleport'"),
        ("model.yaml", "model: gpt4\n", "model: invalid model name 'gpt4'"),
    ],
)
def test_a_bad_blueprint_is_a_usage_error(helix: Helix, name: str, text: str, message: str) -> None:
    path = helix.tmp / name
    path.write_text(text)
    code, stderr = _run(helix, "--model", MODEL, "--blueprint", str(path))
    assert code == 2, stderr
    assert stderr.startswith(f"error: {path}: {message}")  # file: field: reason
    assert len(stderr.splitlines()) == 1
    assert helix.model_requests == []
    if name == "tools.yaml":
        assert helix.ok("runs", "--json") == ""  # no run was registered


def test_a_malformed_model_name_is_a_usage_error(helix: Helix) -> None:
    code, stderr = _run(helix, "--model", "gpt-4.1")
    assert code == 2
    assert stderr.startswith("error: ")
    assert "gpt-4.1" in stderr
    code, stderr = _run(helix, "--model", "nosuchprovider:thing")
    assert code == 2
    assert "nosuchprovider" in stderr


def test_arguments_that_fail_the_schema_go_back_to_the_model(helix: Helix) -> None:
    helix.play(
        {"text": "Reading.", "tool_calls": [{"name": "read_file", "args": {}}]},
        {"text": "Gave up reading."},
    )
    result = helix("run", "read", "--model", MODEL, "--dir", str(helix.world), "--json")
    assert result.returncode == 0, result.stderr
    run_id = helix.ok("runs", "--json").split('"id":"')[1].split('"')[0]
    log = helix.logs(run_id)
    (denied,) = [e for e in of_type(log, "gate.decided") if e["data"]["verdict"] == "deny"]
    assert denied["data"]["gate"] == "arguments"
    (completed,) = of_type(log, "tool.completed")
    assert completed["data"]["ok"] is False
    assert not of_type(log, "tool.started")
    assert types(log)[-1] == "run.completed"
    tool_result = helix.server.requests[-1].body["messages"][-1]
    assert tool_result["role"] == "tool"
    assert tool_result["content"].startswith("denied by the arguments gate: ")
    assert "path" in tool_result["content"]


def test_approving_an_expired_request_is_refused(helix: Helix) -> None:
    blueprint = helix.tmp / "quick.yaml"
    blueprint.write_text("approvals:\n  timeout_s: 1\n")
    helix.play(
        {
            "text": "Making it.",
            "tool_calls": [{"name": "run_command", "args": {"command": "touch made.txt"}}],
        },
        {"text": "Finished."},
    )
    running = helix.start_run("make a file", "--blueprint", str(blueprint))
    running.wait_for("approval.requested")
    running.kill()  # nobody is left to deny it at the deadline
    time.sleep(1.2)

    late = helix("approve", running.run_id)
    assert late.returncode == 1
    assert "expired" in late.stderr
    assert "Traceback" not in late.stderr
    assert not (helix.world / "made.txt").exists()

    # Resumed, the run denies the expired request itself and finishes.
    resumed = helix("resume", running.run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert not (helix.world / "made.txt").exists()
    log = helix.logs(running.run_id)
    (decided,) = of_type(log, "approval.decided")
    assert decided["data"]["decision"] == "deny"
    assert decided["data"]["auto"] is True
    assert types(log)[-1] == "run.completed"


def test_controlling_a_finished_or_missing_run_is_refused(helix: Helix) -> None:
    helix.play({"text": "Nothing to do."})
    result = helix("run", "relax", "--model", MODEL, "--dir", str(helix.world), "--json")
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.split('"run_id":"')[1].split('"')[0]

    for args in (("steer", run_id, "use tabs"), ("approve", run_id), ("pause", run_id)):
        refused = helix(*args)
        assert refused.returncode == 1, args
        assert f"run {run_id!r} is completed: it cannot be" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr

    missing = helix("steer", "run_missing", "hello")
    assert missing.returncode == 3
    assert "does not exist" in missing.stderr
    assert "Traceback" not in missing.stderr
    assert types(helix.logs(run_id))[-1] == "run.completed"  # nothing was appended
