"""Scripted models in server mode: only files beneath the configured folder, else none."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import httpx
import pytest

from helix.kernel.events import RunCreated
from helix.kernel.log import SqliteEventStore
from helix.testing import MockModelServer

from .conftest import (
    Admin,
    Cli,
    LiveServer,
    event_types,
    free_port,
    make_config,
    wait_for_status,
)

SECRET = "TOP-SECRET-SERVER-FILE"
SCENARIO = f"- text: {SECRET}\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A scenario file the server can read but no tenant may play: outside any scripts folder."""
    path = tmp_path / "private" / "secret.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO)
    return path


def _owner(live: LiveServer) -> httpx.Client:
    with live.client() as anonymous:
        token = anonymous.post("/auth/link", json={"token": live.bootstrap_token}).json()["token"]
    return live.client(token)


def _refused(answer: httpx.Response, words: str) -> None:
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["code"] == "invalid_model"
    assert words in answer.json()["error"]["message"]


def test_a_server_without_a_scripts_folder_plays_no_scripted_model(
    live: LiveServer, owner: httpx.Client, secret: Path
) -> None:
    for name in (str(secret), "secret.yaml", "../private/secret.yaml"):
        answer = owner.post("/runs", json={"objective": "x", "model": f"scripted:{name}"})
        _refused(answer, "helix serve --scripts DIR")
    for model in (f"scripted:{secret}", ["openai:gpt-4.1", f"scripted:{secret}"]):
        blueprint = owner.post("/runs", json={"objective": "x", "blueprint": {"model": model}})
        _refused(blueprint, "plays no scripted models")
    assert owner.get("/runs").json()["runs"] == []


def test_scripted_models_play_only_files_beneath_the_folder(
    tmp_path: Path, model_server: MockModelServer, secret: Path
) -> None:
    scripts = tmp_path / "scripts"
    (scripts / "team").mkdir(parents=True)
    (scripts / "team" / "hello.yaml").write_text("- text: hello from the folder\n")
    (scripts / "link.yaml").symlink_to(secret)
    (scripts / "private").symlink_to(secret.parent, target_is_directory=True)
    (scripts / "team" / "dir.yaml").symlink_to("../team")  # a folder, not a file
    live = LiveServer(make_config(tmp_path, model_server, scripts=scripts)).start()
    try:
        with _owner(live) as owner:
            for name in ("team/hello.yaml", "./team/hello.yaml", str(scripts / "team/hello.yaml")):
                started = owner.post("/runs", json={"objective": "hi", "model": f"scripted:{name}"})
                assert started.status_code == 201, started.text
                wait_for_status(owner, started.json()["id"], "completed")
            refused = {
                str(secret): "must stay inside it",
                "../private/secret.yaml": "must stay inside it",
                "team/../../private/secret.yaml": "must stay inside it",
                "link.yaml": "must stay inside it",
                "private/secret.yaml": "must stay inside it",
                "missing.yaml": "no such scenario file",
                "team/dir.yaml": "no such scenario file",
                "": "invalid model name",
            }
            for name, words in refused.items():
                answer = owner.post("/runs", json={"objective": "x", "model": f"scripted:{name}"})
                _refused(answer, words)
            done = owner.get("/runs").json()["runs"]
            assert len(done) == 3
            run_id = done[0]["id"]
            fork = owner.post(
                f"/runs/{run_id}/fork", json={"turn": 0, "model": "scripted:link.yaml"}
            )
            _refused(fork, "must stay inside it")
            for run in done:
                assert SECRET not in owner.get(f"/runs/{run['id']}/export").text
    finally:
        live.stop()


def test_a_run_written_to_name_a_server_file_is_not_played_on_resume(
    tmp_path: Path, model_server: MockModelServer, secret: Path
) -> None:
    """A log that names a file (an import, a run from the CLI) cannot make the server read it."""
    config = make_config(tmp_path, model_server)
    LiveServer(config).start().stop()  # the database and its first account exist
    world = tmp_path / "world"
    world.mkdir()

    async def plant() -> None:
        created = RunCreated(objective="x", model=f"scripted:{secret}", world=str(world))
        async with SqliteEventStore(config.home / "helix.db") as store:
            await store.create_run(created, run_id="planted")  # queued: a server drives it

    asyncio.run(plant())
    live = LiveServer(config).start()  # resumes every unfinished run
    try:
        with live.client(Admin(config.db_url).api_token("admin")) as owner:
            wait_for_status(owner, "planted", "failed")
            events = owner.get("/runs/planted/events", params={"limit": 1000}).json()["events"]
            assert "plays no scripted models" in json.dumps(events)
            assert SECRET not in json.dumps(events)
            assert "model.responded" not in event_types(owner, "planted")
    finally:
        live.stop()


def test_helix_serve_takes_its_scripts_folder(cli: Cli, tmp_path: Path, secret: Path) -> None:
    missing = cli("serve", "--port", str(free_port()), "--scripts", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert "not a directory" in missing.stderr
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "hello.yaml").write_text("- text: hello\n")
    port = free_port()
    cli.serve(port, env={"HELIX_SCRIPTS": str(scripts)})
    found = re.search(r"#login=(\S+)", cli.log(0))
    assert found is not None
    base = f"http://127.0.0.1:{port}/api/v1"
    token = httpx.post(f"{base}/auth/link", json={"token": found.group(1)}).json()["token"]
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as owner:
        started = owner.post("/runs", json={"objective": "hi", "model": "scripted:hello.yaml"})
        assert started.status_code == 201, started.text
        wait_for_status(owner, started.json()["id"], "completed")
        _refused(
            owner.post("/runs", json={"objective": "x", "model": f"scripted:{secret}"}),
            "must stay inside it",
        )
