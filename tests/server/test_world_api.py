"""The run's world over the API: files and diffs at any turn, rollback, and bad input."""

from __future__ import annotations

import httpx

from helix.testing import MockModelServer

from .conftest import MODEL, Admin, LiveServer, play, wait_for_status


def _paths(client: httpx.Client, run_id: str, **params: str) -> set[str]:
    answer = client.get(f"/runs/{run_id}/files", params=params)
    assert answer.status_code == 200, answer.text
    return {f["path"] for f in answer.json()["files"]}


def _finished_run(owner: httpx.Client, model_server: MockModelServer) -> str:
    write = {"name": "write_file", "args": {"path": "a.txt", "content": "one\n"}}
    shell = {"name": "run_command", "args": {"command": "echo two > b.txt && rm a.txt"}}
    play(
        model_server,
        {"text": "Writing.", "tool_calls": [write]},
        {"text": "Shuffling.", "tool_calls": [shell]},
        {"text": "Done."},
    )
    body = {"objective": "shuffle files", "model": MODEL, "auto_approve": True}
    run_id = owner.post("/runs", json=body).json()["id"]
    wait_for_status(owner, run_id, "completed")
    return str(run_id)


def test_files_diff_and_rollback(
    live: LiveServer, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _finished_run(owner, model_server)
    assert _paths(owner, run_id, turn="start") == set()
    assert _paths(owner, run_id, turn="1") == {"a.txt"}
    assert _paths(owner, run_id) == {"b.txt"}  # now: the shell command's work, seen
    old = owner.get(f"/runs/{run_id}/files/a.txt", params={"turn": "1"})
    assert (old.status_code, old.content) == (200, b"one\n")
    diff = owner.get(f"/runs/{run_id}/diff", params={"from": "1", "to": "now"})
    assert diff.status_code == 200
    assert "-one\n" in diff.text
    assert "+two\n" in diff.text

    rolled = owner.post(f"/runs/{run_id}/rollback", json={"to": 1})
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["to_turn"] == 1
    assert rolled.json()["restored"] == ["a.txt"]
    assert rolled.json()["removed"] == ["b.txt"]
    assert _paths(owner, run_id) == {"a.txt"}
    events = owner.get(f"/runs/{run_id}/events", params={"limit": 1000}).json()["events"]
    assert events[-1]["type"] == "world.rolled_back"


def test_bad_points_paths_and_strangers(
    live: LiveServer, admin: Admin, owner: httpx.Client, model_server: MockModelServer
) -> None:
    run_id = _finished_run(owner, model_server)
    cases = [
        (owner.get(f"/runs/{run_id}/files", params={"turn": "99"}), 404),
        (owner.get(f"/runs/{run_id}/files", params={"turn": "soon"}), 422),
        (owner.get(f"/runs/{run_id}/files/../secret"), 404),
        (owner.get(f"/runs/{run_id}/files/%2E%2E/secret"), 422),
        (owner.get(f"/runs/{run_id}/files/nope.txt"), 404),
        (owner.get(f"/runs/{run_id}/diff", params={"from": "x"}), 422),
        (owner.post(f"/runs/{run_id}/rollback", json={"to": 99}), 404),
        (owner.post(f"/runs/{run_id}/rollback", json={"to": "now"}), 422),
        (owner.post(f"/runs/{run_id}/rollback", json={"to": [1]}), 422),
        (owner.get("/runs/run_nope/files"), 404),
    ]
    for answer, status in cases:
        assert answer.status_code == status, (answer.request.url, answer.text)
        assert answer.json()["error"]["code"]
    assert _paths(owner, run_id) == {"b.txt"}  # nothing changed

    admin.workspace("other")
    admin.user("olga", workspace="other", role="owner")
    admin.user("vera", workspace="default", role="viewer")
    with live.client(admin.api_token("olga")) as olga:
        assert olga.get(f"/runs/{run_id}/files").status_code == 404
        assert olga.get(f"/runs/{run_id}/diff").status_code == 404
        assert olga.post(f"/runs/{run_id}/rollback", json={"to": 1}).status_code == 404
    with live.client(admin.api_token("vera")) as vera:
        assert _paths(vera, run_id) == {"b.txt"}  # viewers look
        assert vera.post(f"/runs/{run_id}/rollback", json={"to": 1}).status_code == 403
