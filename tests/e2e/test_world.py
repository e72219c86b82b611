"""The world commands through the real ``helix``: files, diff, rollback, fork, compare, keep."""

from __future__ import annotations

import json

from .conftest import Helix, of_type


def _two_turns(helix: Helix) -> str:
    (helix.world / "start.txt").write_text("start\n")
    helix.play(
        {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "a.txt", "content": "one\n"}}],
        },
        {
            "text": "Shell.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": "rm start.txt && echo two >> a.txt"}}
            ],
        },
        {"text": "Done."},
    )
    running = helix.start_run("change files", "--auto-approve")
    assert running.finish() == 0, running.stderr
    return running.run_id


def test_files_diff_and_rollback(helix: Helix) -> None:
    run_id = _two_turns(helix)
    listing = [json.loads(line) for line in helix.ok("files", run_id, "--json").splitlines()]
    assert [f["path"] for f in listing] == ["a.txt"]
    assert helix.ok("files", run_id, "a.txt", "--turn", "1") == "one\n"
    assert helix.ok("files", run_id, "start.txt", "--turn", "start") == "start\n"
    diff = helix.ok("diff", run_id)
    assert "deleted file mode 644" in diff
    assert "+one\n+two\n" in diff
    assert helix.ok("diff", run_id, "--from", "1", "--to", "2", "a.txt").endswith(" one\n+two\n")

    done = helix.ok("rollback", run_id, "--to", "1")
    assert "restored" in done
    assert (helix.world / "a.txt").read_text() == "one\n"
    assert (helix.world / "start.txt").read_text() == "start\n"
    marker = of_type(helix.logs(run_id), "world.rolled_back")[0]
    assert marker["actor"] == "user:tester"
    assert marker["data"]["to_turn"] == 1

    missing = helix("rollback", run_id, "--to", "7")
    assert missing.returncode == 3
    assert "has no turn 7" in missing.stderr
    outside = helix("files", run_id, "../etc/passwd")
    assert outside.returncode == 2
    assert "outside the world" in outside.stderr
    bad = helix("diff", run_id, "--from", "yesterday")
    assert bad.returncode == 2
    assert "Traceback" not in missing.stderr + outside.stderr + bad.stderr
    assert (helix.world / "a.txt").read_text() == "one\n"  # nothing changed


def test_a_running_run_is_not_rolled_back(helix: Helix) -> None:
    helix.play(
        {"text": "Ask.", "tool_calls": [{"name": "run_command", "args": {"command": "touch x"}}]},
        {"text": "Done."},
    )
    running = helix.start_run("wait for approval")
    running.wait_for("approval.requested")
    refused = helix("rollback", running.run_id)
    assert refused.returncode == 1
    assert "pause it first" in refused.stderr
    helix.ok("cancel", running.run_id)
    running.finish()


def test_fork_compare_and_keep(helix: Helix) -> None:
    run_id = _two_turns(helix)
    fork = json.loads(helix.ok("fork", run_id, "--turn", "1", "--detach", "--json"))
    assert fork["id"] != run_id
    compared = helix.ok("compare", run_id, fork["id"])
    assert "+start" in compared  # the fork's world is turn 1's: start.txt still there
    refused = helix("keep", fork["id"])
    assert refused.returncode == 2
    assert "--yes" in refused.stderr
    kept = helix.ok("keep", fork["id"], "--yes")
    assert "kept" in kept
    assert (helix.world / "a.txt").read_text() == "one\n"
    assert (helix.world / "start.txt").read_text() == "start\n"
    assert of_type(helix.logs(run_id), "world.kept")[0]["data"]["branch"] == fork["id"]


def test_rollback_reports_a_link_it_will_not_follow(helix: Helix) -> None:
    # The agent writes d/x, hides d with a .helixignore, then swaps d for a link to a
    # folder of the person's (outside the world): the rollback must not write through it.
    host = helix.tmp / "host"
    host.mkdir()
    (host / "x").write_text("the person's file\n")
    host.chmod(0o750)
    helix.play(
        {
            "text": "Write.",
            "tool_calls": [{"name": "write_file", "args": {"path": "d/x", "content": "agent\n"}}],
        },
        {
            "text": "Hide.",
            "tool_calls": [
                {"name": "write_file", "args": {"path": ".helixignore", "content": "d\n"}}
            ],
        },
        {
            "text": "Swap.",
            "tool_calls": [
                {"name": "run_command", "args": {"command": f"rm -r d && ln -s '{host}' d"}}
            ],
        },
        {"text": "Done."},
    )
    running = helix.start_run("hide a link", "--auto-approve")
    assert running.finish() == 0, running.stderr
    assert (helix.world / "d").is_symlink()

    done = helix.ok("rollback", running.run_id, "--to", "1")

    assert (host / "x").read_text() == "the person's file\n"
    assert host.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in host.iterdir()) == ["x"]
    assert "1 left as they were" in done
    assert f"conflict: d: a symbolic link to '{host}' stands where a folder" in done
    marker = of_type(helix.logs(running.run_id), "world.rolled_back")[0]
    assert [c["path"] for c in marker["data"]["conflicts"]] == ["d"]
