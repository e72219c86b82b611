"""Where runs are driven, through both doors: the nodes, a run on one, drain refused."""

from __future__ import annotations

import pytest

from helix import AsyncClient
from helix.api import NodeList
from helix.errors import NodeNotFoundError, NodeStateError
from helix.testing import MockModelServer

from .conftest import MODEL, Door, play

ASK = {"name": "run_command", "args": {"command": "true"}}


async def _waiting_run(client: AsyncClient, model_server: MockModelServer) -> str:
    """A run that waits for an approval: driven (its lease held) until it is answered."""
    play(model_server, {"text": "Asking.", "tool_calls": [ASK]}, {"text": "Done."})
    run = await client.create("ask first", model=MODEL)
    async for event in client.events(run.id, follow=True):
        if event.type == "approval.requested":
            break
    return run.id


async def test_one_local_node_drives_the_waiting_run_and_cannot_be_drained(
    door: Door, client: AsyncClient, model_server: MockModelServer
) -> None:
    run_id = await _waiting_run(client, model_server)
    listed = await client.nodes()
    assert isinstance(listed, NodeList)
    assert listed.executor == "local"
    [node] = listed.nodes
    assert (node.id, node.executor, node.state) == ("local", "local", "alive")
    assert node.resources["CPU"] >= 1
    assert node.resources["memory"] > 2**20  # bytes, through both doors
    assert node.address
    assert node.runs == [run_id]
    assert node.run_count == 1

    with pytest.raises(NodeStateError):  # 409 over HTTP, the same class here
        await client.drain_node("local")
    with pytest.raises(NodeNotFoundError):  # 404 node_not_found over HTTP
        await client.drain_node("worker-9")
    with pytest.raises(NodeNotFoundError):
        await client.drain_node("../runs")  # one path segment, whatever it holds
    await client.decide(run_id, None, "allow")
    async for _ in client.events(run_id, follow=True):
        pass
    assert (await client.get(run_id)).status == "completed"
    [after] = (await client.nodes()).nodes
    assert after.runs == []
    assert after.run_count == 0


def test_the_sync_client_lists_and_refuses_the_same(door: Door) -> None:
    from helix import Client

    opened = Client(door.url, token=door.token) if door.url else Client(env=door.env, user="t")
    with opened as client:
        [node] = client.nodes().nodes
        assert (node.id, node.state, node.run_count) == ("local", "alive", 0)
        with pytest.raises(NodeStateError):
            client.drain_node("local")
        with pytest.raises(NodeNotFoundError):
            client.drain_node("nowhere")
