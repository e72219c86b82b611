"""Hand-edited exports imported by an ordinary member: the file is never trusted.

Each attack was shown against a real server: a ``run.created`` world pointing at a host
folder (read ``/etc/shadow`` through the files route, delete or write host files through
rollback), snapshot hashes and paths that walk out of the object store or the world, a
stored object passed off as a manifest, and a run that resumes by itself with
auto-approval. The server here is real (uvicorn, SQLite, the engine); only the model is
scripted.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from helix.testing import MockModelServer

from .conftest import (
    MODEL,
    Admin,
    LiveServer,
    event_types,
    play,
    wait_for_status,
    wait_until,
)

SECRET = "the host's secret\n"


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _body(events: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in events).encode()


def _member(live: LiveServer, admin: Admin) -> httpx.Client:
    admin.user("mallory", workspace="default", role="member")
    return live.client(admin.api_token("mallory"))


def _written_run(client: httpx.Client, server: MockModelServer, content: str) -> str:
    """A finished run whose one turn wrote ``a.txt`` holding ``content``."""
    write = {"name": "write_file", "args": {"path": "a.txt", "content": content}}
    play(server, {"text": "Writing.", "tool_calls": [write]}, {"text": "Done."})
    body = {"objective": "write a file", "model": MODEL, "auto_approve": True}
    run_id = str(client.post("/runs", json=body).json()["id"])
    wait_for_status(client, run_id, "completed")
    return run_id


def _export(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"/runs/{run_id}/export")
    assert answer.status_code == 200, answer.text
    return _lines(answer.text)


def _import(client: httpx.Client, events: list[dict[str, Any]], as_id: str) -> httpx.Response:
    return client.post("/runs/import", params={"as": as_id}, content=_body(events))


def _first_snapshot(events: list[dict[str, Any]]) -> int:
    return next(i for i, e in enumerate(events) if e["type"] == "world.snapshotted")


def _changing_snapshot(events: list[dict[str, Any]]) -> int:
    return next(
        i for i, e in enumerate(events) if e["type"] == "world.snapshotted" and e["data"]["changes"]
    )


@pytest.mark.parametrize("outside", ["/etc", "tmp"])
def test_an_imported_world_is_rehomed_never_the_files(
    live: LiveServer,
    admin: Admin,
    model_server: MockModelServer,
    tmp_path: Path,
    outside: str,
) -> None:
    if outside == "tmp":
        victim = tmp_path / "host"
        victim.mkdir()
        (victim / "shadow").write_text(SECRET)
        (victim / "a.txt").write_text(SECRET)
        outside = str(victim)
    with _member(live, admin) as mallory:
        events = _export(mallory, _written_run(mallory, model_server, "mine\n"))
        events[0]["data"]["world"] = outside
        imported = _import(mallory, events, "stolen")
        assert imported.status_code == 201, imported.text

        shadow = mallory.get("/runs/stolen/files/shadow")
        assert shadow.status_code == 404, shadow.content[:80]
        assert shadow.json()["error"]["code"] == "not_found"
        run = mallory.get("/runs/stolen").json()
        world = Path(run["world"])
        assert world.parent == (live.config.worlds / run["workspace"]).resolve()
        assert world.is_dir()
        assert list(world.iterdir()) == []
        listed = mallory.get("/runs/stolen/files")
        assert (listed.status_code, listed.json()["files"]) == (200, [])

        # Rollback works on the new folder: the recorded content comes back there...
        back = mallory.post("/runs/stolen/rollback", json={"to": 1})
        assert back.status_code == 200, back.text
        assert (world / "a.txt").read_text() == "mine\n"
        # ...and rolling back to the empty start removes it there, never on the host.
        start = mallory.post("/runs/stolen/rollback", json={"to": "start"})
        assert start.status_code == 200, start.text
        assert start.json()["removed"] == ["a.txt"]
        assert not (world / "a.txt").exists()
    if outside != "/etc":
        assert (Path(outside) / "a.txt").read_text() == SECRET
        assert (Path(outside) / "shadow").read_text() == SECRET


def _set_entry(events: list[dict[str, Any]], path: str, **entry: Any) -> int:
    """Put one entry (path → entry) in the snapshot that recorded the turn; its line."""
    at = _changing_snapshot(events)
    changes = events[at]["data"]["changes"]
    (_name, recorded), *_ = changes.items()
    changes.clear()
    changes[path] = {**recorded, **entry}
    return at + 1


@pytest.mark.parametrize(
    ("path", "entry", "said"),
    [
        ("a.txt", {"hash": "xx/etc/shadow"}, "not a SHA-256 digest"),
        ("a.txt", {"hash": "../../../../../../etc/shadow" + "0" * 36}, "not a SHA-256 digest"),
        ("a.txt", {"hash": "A" * 64}, "not a SHA-256 digest"),
        ("../../../../etc/shadow", {}, "'..' component"),
        ("/etc/shadow", {}, "is absolute"),
        ("a//b", {}, "empty component"),
        ("./a.txt", {}, "'.' component"),
        ("a\\..\\..\\b", {}, "backslash"),
        ("a\u0000b", {}, "NUL byte"),
        ("", {}, "is empty"),
    ],
)
def test_snapshot_entries_are_checked_line_by_line(
    live: LiveServer,
    admin: Admin,
    model_server: MockModelServer,
    path: str,
    entry: dict[str, Any],
    said: str,
) -> None:
    with _member(live, admin) as mallory:
        events = _export(mallory, _written_run(mallory, model_server, "mine\n"))
        line = _set_entry(events, path, **entry)
        refused = _import(mallory, events, "stolen")
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "invalid_event"
        assert error["message"].startswith(f"line {line}: world.snapshotted")
        assert said in error["message"], error["message"]
        assert mallory.get("/runs/stolen").status_code == 404  # nothing was written
        assert list(live.config.worlds.glob("*/imported-*")) == []


@pytest.mark.parametrize(
    ("event_type", "edit", "said"),
    [
        ("world.snapshotted", {"base": "xx/etc/shadow"}, "not a SHA-256 digest"),
        ("file.changed", {"after": "../../etc/shadow"}, "not a SHA-256 digest"),
        ("file.changed", {"before": "xx/etc/shadow"}, "not a SHA-256 digest"),
        ("file.changed", {"path": "../../etc/shadow"}, "'..' component"),
    ],
)
def test_hashes_and_paths_of_other_events_are_checked(
    live: LiveServer,
    admin: Admin,
    model_server: MockModelServer,
    event_type: str,
    edit: dict[str, Any],
    said: str,
) -> None:
    with _member(live, admin) as mallory:
        events = _export(mallory, _written_run(mallory, model_server, "mine\n"))
        at = next(i for i, e in enumerate(events) if e["type"] == event_type)
        events[at]["data"].update(edit)
        refused = _import(mallory, events, "stolen")
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["message"].startswith(f"line {at + 1}: {event_type}")
        assert said in refused.json()["error"]["message"]


def test_a_stored_object_passed_off_as_a_manifest_is_refused(
    live: LiveServer, admin: Admin, model_server: MockModelServer
) -> None:
    victim = live.config.home / "victim.txt"
    victim.write_text(SECRET)
    with _member(live, admin) as mallory:
        # A run's file is stored as an object; its content is a manifest naming a path
        # out of the world (imported-x/../../../victim.txt is HELIX_HOME/victim.txt).
        digest = hashlib.sha256(b"x").hexdigest()
        fake = json.dumps({"../../../victim.txt": [digest, 0o100644, 1, 0]})
        events = _export(mallory, _written_run(mallory, model_server, fake))
        base = _first_snapshot(events)
        events[base]["data"]["base"] = hashlib.sha256(fake.encode()).hexdigest()
        imported = _import(mallory, events, "stolen")
        assert imported.status_code == 201, imported.text  # its form is right: a digest
        for answer in (
            mallory.get("/runs/stolen/files", params={"turn": "start"}),
            mallory.get("/runs/stolen/files/victim.txt", params={"turn": "1"}),
            mallory.post("/runs/stolen/rollback", json={"to": "start"}),
            mallory.post("/runs/stolen/rollback", json={"to": 1}),
        ):
            assert answer.status_code == 422, (answer.request.url, answer.text)
            error = answer.json()["error"]
            assert error["code"] == "invalid_object"
            assert "'..' component" in error["message"]
    assert victim.read_text() == SECRET


def test_an_imported_run_is_paused_and_never_auto_approves(
    live: LiveServer, admin: Admin, model_server: MockModelServer
) -> None:
    with _member(live, admin) as mallory:
        # A run stopped right after the model asked for a command that needs approval.
        run = {"name": "run_command", "args": {"command": "touch pwned"}}
        play(model_server, {"text": "Running.", "tool_calls": [run]}, {"text": "Done."})
        body = {"objective": "run it", "model": MODEL}
        run_id = str(mallory.post("/runs", json=body).json()["id"])
        wait_for_status(mallory, run_id, "waiting")
        events = _export(mallory, run_id)
        mallory.post(f"/runs/{run_id}/cancel")
        cut = max(i for i, e in enumerate(events) if e["type"] == "model.responded")
        events = events[: cut + 1]
        events[0]["data"]["settings"]["auto_approve"] = True
        events[0]["data"]["settings"]["attended"] = True

        imported = _import(mallory, events, "stolen")
        assert imported.status_code == 201, imported.text
        assert imported.json()["status"] == "paused"  # never resumed by a (re)start
        log = _export(mallory, "stolen")
        assert log[0]["data"]["settings"]["auto_approve"] is False
        assert log[-1]["type"] == "run.paused"
        assert log[-1]["data"] == {"reason": "imported", "detail": None}
        assert log[-1]["actor"] == "user:mallory"

        # Resumed by a person, it asks for approval like any run that may not auto-approve.
        resumed = mallory.post("/runs/stolen/resume")
        assert resumed.status_code == 200, resumed.text
        wait_until(lambda: "approval.requested" in event_types(mallory, "stolen"), "an approval")
        types = event_types(mallory, "stolen")
        assert "approval.requested" in types
        assert "approval.decided" not in types
        assert "tool.started" not in types
        world = Path(mallory.get("/runs/stolen").json()["world"])
        assert not (world / "pwned").exists()
        mallory.post("/runs/stolen/cancel")
        wait_until(lambda: "run.cancelled" in event_types(mallory, "stolen"), "cancel")


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"auto_approve": "yes"}, "settings.auto_approve: Input should be a valid boolean"),
        ({"surprise": 1}, "settings.surprise: Extra inputs are not permitted"),
        ({"blueprint": {"approvals": {"timeout_s": -1}}}, "settings.blueprint.approvals.timeout_s"),
    ],
)
def test_bad_run_settings_are_refused_by_line(
    live: LiveServer,
    admin: Admin,
    model_server: MockModelServer,
    edit: dict[str, Any],
    said: str,
) -> None:
    with _member(live, admin) as mallory:
        events = _export(mallory, _written_run(mallory, model_server, "mine\n"))
        events[0]["data"]["settings"].update(edit)
        refused = _import(mallory, events, "stolen")
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "invalid_event"
        assert error["message"].startswith("line 1: run.created: "), error["message"]
        assert said in error["message"], error["message"]
        assert mallory.get("/runs/stolen").status_code == 404  # nothing was written
        assert list(live.config.worlds.glob("*/imported-*")) == []
