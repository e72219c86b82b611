"""The sync ``helix.Client``, the protocol both doors satisfy, and HTTP error mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

import helix
from helix import AsyncClient, Client
from helix.api import HelixApi, HttpApi, LocalApi, error_of
from helix.errors import (
    ApprovalClosedError,
    ConfigError,
    HelixError,
    NotFoundError,
    RunNotFoundError,
    RunStateError,
    StoreUnavailableError,
)
from helix.testing import MockModelServer
from tests.server.conftest import Admin, free_port

from .conftest import MODEL, Door, play, raw_client

ASK = {"name": "run_command", "args": {"command": "echo hi > out.txt"}}


def _sync_client(door: Door) -> Client:
    if door.url is not None:
        return Client(door.url, token=door.token)
    return Client(env=door.env, user="tester")


def test_the_sync_client_end_to_end(door: Door, model_server: MockModelServer) -> None:
    write = {"name": "write_file", "args": {"path": "a.txt", "content": "one\n"}}
    play(
        model_server,
        {"text": "Writing.", "tool_calls": [write]},
        {"text": "Checking.", "tool_calls": [ASK]},
        {"text": "Done."},
        {"text": "Forked and done."},
    )
    with _sync_client(door) as client:
        run = client.create("write and check", model=MODEL)
        seen = []
        for event in client.events(run.id, follow=True):
            seen.append(event.type)
            if event.type == "approval.requested":
                assert [a.name for a in client.approvals(run.id)] == ["run_command"]
                client.decide(run.id, None, "allow")
        assert seen[-1] == "run.completed"
        assert client.wait(run.id).status == "completed"
        assert client.read(run.id, "out.txt") == b"hi\n"
        assert [r.id for r in client.runs().runs] == [run.id]

        fork = client.fork(run.id, turn=1)
        assert client.wait(fork.id).status == "completed"
        assert {f.path for f in client.files(fork.id)} == {"a.txt"}
        rolled = client.rollback(run.id, to="start")
        assert sorted(rolled.removed) == ["a.txt", "out.txt"]
        assert client.files(run.id) == []
        assert len(list(client.export(run.id))) == client.get(run.id).events
        with pytest.raises(RunNotFoundError):
            client.get("no-such-run")
        with pytest.raises(RunStateError):  # it has ended
            client.decide(run.id, None, "allow")
        # Breaking out of a followed stream closes it; the client keeps working.
        for _event in client.events(run.id, follow=True):
            break
        assert client.spend().runs == 2
    with pytest.raises(RuntimeError):
        client.get(run.id)  # closed


def test_helix_exports_the_clients_lazily() -> None:
    assert helix.Client is Client
    assert helix.AsyncClient is AsyncClient


async def test_both_doors_are_the_protocol(client: AsyncClient) -> None:
    assert isinstance(client.api, HelixApi)
    assert isinstance(client.api, LocalApi | HttpApi)


def _as_protocol(local: LocalApi, remote: HttpApi, sdk: AsyncClient) -> list[HelixApi]:
    """Checked by mypy: each of these is a ``HelixApi``."""
    return [local, remote, sdk]


def test_error_bodies_map_back_to_the_tree() -> None:
    body = '{"error": {"code": "approval_closed", "message": "approval x expired"}}'
    error = error_of(409, body)
    assert type(error) is ApprovalClosedError
    assert str(error) == "approval x expired"
    found = '{"error": {"code": "run_not_found", "message": "run r does not exist"}}'
    assert type(error_of(404, found)) is RunNotFoundError
    assert type(error_of(404, '{"error": {"code": "not_found", "message": "no"}}')) is NotFoundError
    denied = error_of(401, '{"error": {"code": "unauthorized", "message": "bad token"}}')
    assert type(denied) is HelixError
    assert denied.code == "unauthorized"
    assert type(error_of(422, '{"error": {"code": "bad_json", "message": "?"}}')) is ConfigError
    assert type(error_of(503, "<html>gateway</html>")) is StoreUnavailableError
    assert str(error_of(500, "")) == "HTTP 500"


async def test_http_auth_and_reachability(server_door: Door) -> None:
    door = server_door
    assert door.url is not None
    async with AsyncClient(door.url, token="not-a-token") as stranger:
        with pytest.raises(HelixError) as refused:
            await stranger.runs()
    assert refused.value.code == "unauthorized"
    with raw_client(door) as raw:
        made = raw.post("/runs", json={"objective": "x", "model": MODEL}).json()["id"]
    async with door.client() as client:
        assert (await client.get(made)).objective == "x"  # one server, either client
        with pytest.raises(ConfigError):  # a local path means nothing to a server
            await client.create("x", model=MODEL, world="/tmp")
    async with AsyncClient(f"http://127.0.0.1:{free_port()}") as nowhere:
        with pytest.raises(StoreUnavailableError):
            await nowhere.get("r")


async def test_http_roles_and_visibility(server_door: Door) -> None:
    live = server_door.live
    assert live is not None
    admin = Admin(live.config.db_url)
    admin.user("vic", password="pw-vic-12345", workspace="default", role="viewer")
    admin.user("olga", password="pw-olga-12345")
    async with server_door.client() as owner:
        run = await owner.create("x", model=MODEL)
    async with AsyncClient(live.url, token=live.login("vic", "pw-vic-12345")) as viewer:
        assert (await viewer.get(run.id)).id == run.id
        for refused in (viewer.pause(run.id), viewer.keep(run.id), viewer.steer(run.id, "hi")):
            with pytest.raises(HelixError) as forbidden:
                await refused
            assert forbidden.value.code == "forbidden"
    async with AsyncClient(live.url, token=live.login("olga", "pw-olga-12345")) as stranger:
        with pytest.raises(RunNotFoundError):  # another workspace's run is not there at all
            await stranger.get(run.id)
        with pytest.raises(RunNotFoundError):
            await stranger.compare(run.id, run.id)
        assert (await stranger.spend()).runs == 0


def test_an_embedded_client_keeps_everything_under_its_home(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    play(model_server, {"text": "Done."})
    home = tmp_path / "elsewhere"
    env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": model_server.openai_base_url,
           "HELIX_HOME": str(tmp_path / "not-this-one")}  # fmt: skip
    with Client(home=home, env=env, user="tester") as client:
        run = client.create("finish", model=MODEL)
        assert client.wait(run.id).status == "completed"
    assert (home / "helix.db").is_file()
    assert Path(run.world).parent.parent == home / "worlds"
    assert not (tmp_path / "not-this-one").exists()


def test_the_wire_event_is_the_logs_envelope_field_for_field() -> None:
    # The envelope is the kernel's (Event); the SDK's RunEvent is its wire form and may
    # neither add, drop nor retype a field.
    from typing import get_type_hints

    from helix.api import RunEvent
    from helix.kernel.events import Event

    assert tuple(RunEvent.model_fields) == Event._fields
    kernel = get_type_hints(Event)
    assert {name: field.annotation for name, field in RunEvent.model_fields.items()} == kernel
