"""A foreground run that pauses says why and how to resume, and exits 5 (unless --wait);
``helix logs`` says why every failure failed."""

from __future__ import annotations

import json

from .conftest import MODEL, Helix, of_type, types

LOOKING = {"text": "Looking.", "tool_calls": [{"name": "list_files", "args": {}}]}


def _one_turn(helix: Helix) -> list[str]:
    """``--blueprint`` of a run capped at one turn."""
    blueprint = helix.tmp / "one-turn.yaml"
    blueprint.write_text("budget: {max_turns: 1}\n")
    return ["--blueprint", str(blueprint)]


def _run(helix: Helix, *extra: str) -> tuple[int, str, str]:
    result = helix("run", "look around", "--model", MODEL, "--dir", str(helix.world), *extra)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stdout, result.stderr


def test_a_run_at_its_turn_limit_says_so_exits_5_and_resumes_with_more_turns(
    helix: Helix,
) -> None:
    helix.play(LOOKING, {"text": "Seen it all."})
    code, out, err = _run(helix, *_one_turn(helix))
    assert code == 5, err
    run_id = helix.show("last")["id"]
    assert "paused: it reached its turn limit (max_turns 1)" in out
    assert f"resume it: helix resume {run_id} --max-turns 2" in out
    assert helix.show(run_id)["status"] == "paused"
    assert len(helix.model_requests) == 1  # it stopped there, and so did this process
    (paused,) = of_type(helix.logs(run_id), "run.paused")
    assert paused["data"]["reason"] == "max_turns"

    refused = helix("resume", run_id)  # the same cap would only pause it again
    assert refused.returncode == 1
    assert "paused at its turn limit" in refused.stderr
    assert "helix resume RUN --max-turns N" in refused.stderr
    too_few = helix("resume", run_id, "--max-turns", "1")
    assert too_few.returncode == 1
    assert "has taken 1 turns already" in too_few.stderr

    resumed = helix("resume", run_id, "--max-turns", "2")
    assert resumed.returncode == 0, resumed.stderr
    log = helix.logs(run_id)
    assert types(log)[-1] == "run.completed"
    assert of_type(log, "run.resumed")[-1]["data"]["budget"]["max_turns"] == 2
    assert len(helix.model_requests) == 2


def test_with_json_the_events_end_at_the_pause_and_the_words_go_to_stderr(
    helix: Helix,
) -> None:
    helix.play(LOOKING, LOOKING)
    code, out, err = _run(helix, *_one_turn(helix), "--json")
    assert code == 5, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["type"] == "run.paused"
    run_id = events[0]["run_id"]
    assert "paused: it reached its turn limit (max_turns 1)" in err
    assert f"resume it: helix resume {run_id} --max-turns 2" in err

    again = helix("resume", run_id, "--max-turns", "2", "--json")  # pauses again, at 2
    assert again.returncode == 5, again.stderr
    assert f"helix resume {run_id} --max-turns 4" in again.stderr
    resumed_events = [json.loads(line) for line in again.stdout.splitlines()]
    assert resumed_events[0]["type"] == "run.resumed"  # from the resume on, not the old pause
    assert resumed_events[-1]["type"] == "run.paused"


def test_a_pause_from_elsewhere_ends_the_foreground_command_with_who_paused(
    helix: Helix,
) -> None:
    helix.play(LOOKING, {"text": "Done."})
    helix.server.hold()  # the first reply waits until the pause is in
    running = helix.start_run("look around")
    running.wait_for("model.requested")
    assert helix("pause", running.run_id).returncode == 0
    helix.server.release()
    assert running.finish() == 5, running.stderr
    assert "paused: paused by user:tester" in running.stderr
    assert f"resume it: helix resume {running.run_id}\n" in running.stderr
    assert helix.show(running.run_id)["status"] == "paused"  # and nothing drives it now

    resumed = helix("resume", running.run_id)  # driven by the resuming process, to the end
    assert resumed.returncode == 0, resumed.stderr
    assert "another process" not in resumed.stdout
    assert types(helix.logs(running.run_id))[-1] == "run.completed"


def test_with_wait_a_paused_run_waits_for_a_resume_from_another_process(helix: Helix) -> None:
    helix.play(LOOKING, {"text": "Seen it all."})
    running = helix.start_run("look around", *_one_turn(helix), "--wait")
    running.wait_for("run.paused")
    assert running.process.poll() is None  # still there, waiting
    resumed = helix("resume", running.run_id, "--max-turns", "3")
    assert resumed.returncode == 0, resumed.stderr
    assert "another process is driving it" in resumed.stdout
    assert running.finish() == 0, running.stderr
    assert types(helix.logs(running.run_id))[-1] == "run.completed"


def test_logs_say_why_a_model_call_failed_even_when_the_server_said_nothing(
    helix: Helix,
) -> None:
    helix.play({"error": {"status": 500, "message": ""}}, {"error": {"status": 400, "message": ""}})
    code, _out, err = _run(helix, "--json")
    assert code == 1, err
    run_id = helix.show("last")["id"]
    lines = helix.ok("logs", run_id).splitlines()
    failed = [line for line in lines if " model.failed " in line]
    assert len(failed) == 2
    said = "openai answered {}: no detail from the server (attempt {}"
    assert said.format(500, 1) + ", retry in " in failed[0]
    assert failed[1].endswith(said.format(400, 2) + ", no retry)")
    (ended,) = [line for line in lines if " run.failed " in line]
    assert ended.endswith("openai answered 400: no detail from the server")


def test_logs_show_a_failed_tool_calls_reason(helix: Helix) -> None:
    reading = {"name": "read_file", "args": {"path": "missing.txt"}}
    helix.play({"text": "Reading.", "tool_calls": [reading]}, {"text": "It is not there."})
    code, _out, err = _run(helix, "--json")
    assert code == 0, err
    lines = helix.ok("logs", "last").splitlines()
    (completed,) = [line for line in lines if " tool.completed " in line]
    assert " error: " in completed
    assert "missing.txt" in completed.split(" error: ", 1)[1]


def test_a_run_paused_by_its_models_mistakes_says_what_went_wrong(helix: Helix) -> None:
    helix.play({"text": ""}, {"text": ""}, {"text": "Back on track."})
    blueprint = helix.tmp / "strict.yaml"
    blueprint.write_text("model_errors: {pause_after: 2}\n")
    code, out, err = _run(helix, "--blueprint", str(blueprint))
    assert code == 5, err
    run_id = helix.show("last")["id"]
    assert "paused: the model's last 2 replies in a row went wrong" in out
    assert f"resume it: helix resume {run_id}\n" in out
    resumed = helix("resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert types(helix.logs(run_id))[-1] == "run.completed"
