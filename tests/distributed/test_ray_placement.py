"""Placing a run's commands on a labelled Ray node: where they ran, what came back, what not.

A node of its own (label ``helix.test=raytier``) joins the session's cluster for this
module; runs are real engine runs with a scripted model, their commands real Ray tasks
in that node's bubblewrap.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from helix.distributed import RayNodeSandbox, RayPlacer, connect_ray
from helix.errors import ConfigError
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, Placement, RunSetup
from helix.sandbox import EgressDecision, EgressPolicy, policy_hook

from .conftest import RayCluster

LABEL = {"helix.test": "raytier"}

pytestmark = pytest.mark.usefixtures("bwrap_available")


@pytest.fixture(scope="module")
def labelled(ray_cluster: RayCluster) -> str:
    """The id of a node only this module's placements select."""
    node = ray_cluster.add_node(num_cpus=1, labels=LABEL)
    connect_ray(ray_cluster.address)
    return str(node.node_id)


def _engine(home: Path, cluster: RayCluster, *steps: dict[str, Any]) -> Engine:
    scenario = Scenario.of(*steps, {"text": "done"})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="test")

    placer = RayPlacer(cluster.address, max_processes=64)
    return Engine(MemoryEventStore(), home=home, model_factory=model, env={}, placer=placer)


def _command(command: str) -> dict[str, Any]:
    return {
        "text": "running",
        "tool_calls": [{"name": "run_command", "args": {"command": command}}],
    }


async def test_a_placed_command_runs_on_the_labelled_node_and_its_changes_are_the_runs(
    tmp_path: Path, ray_cluster: RayCluster, labelled: str
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "old.txt").write_text("to remove\n")
    (world / "kept.txt").write_text("kept\n")
    engine = _engine(
        tmp_path / "home",
        ray_cluster,
        _command("mkdir -p out && echo made > out/a.txt && rm old.txt && pwd && hostname"),
        _command("cat out/a.txt kept.txt"),
    )
    blueprint = Blueprint(
        model="scripted:t", placement={"labels": LABEL}, sandbox={"kind": "bwrap"}
    )
    record = await engine.create("place", blueprint=blueprint, world=world, auto_approve=True)
    state = await engine.drive(record.id)
    assert state.status == "completed"

    log = await engine.store.read(record.id)
    started = [e.data for e in log if e.type == "tool.started"]
    done = [e.data for e in log if e.type == "tool.completed"]
    assert [d["node"] for d in done] == [labelled, labelled]
    assert all(d["ok"] for d in done)
    assert started[0]["sandbox"] == "bwrap"
    assert "on a Ray node (labels helix.test=raytier)" in started[0]["reason"]
    assert done[0]["output"] == f"{world}\nhelix-sandbox\n[exit code 0]"  # the host's path
    assert done[1]["output"] == "made\nkept\n[exit code 0]"
    # In the run's world, and in its snapshot of the turn, as a local command's would be.
    assert (world / "out" / "a.txt").read_text() == "made\n"
    assert not (world / "old.txt").exists()
    turn_one = next(e for e in log if e.type == "world.snapshotted" and e.turn == 1)
    changes = turn_one.data["changes"]
    assert changes["old.txt"] is None
    assert changes["out/a.txt"]["size"] == 5
    assert stat.S_ISDIR(changes["out"]["mode"])


async def test_what_a_command_leaves_that_points_out_of_the_world_is_refused(
    tmp_path: Path, labelled: str
) -> None:
    world = tmp_path / "world"
    world.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    box = RayNodeSandbox(Placement(labels=LABEL), hidden=[], max_world_bytes=1 << 20)
    command = (
        "ln -s /etc escape && ln -s ../../outside up && mkfifo pipe && echo in > inside.txt"
        " && ln -s inside.txt near && head -c 2000000 /dev/zero > big.bin"
    )
    result = await box.run(command, cwd=world, timeout_s=60)
    assert result.exit_code == 0
    assert result.node == labelled
    assert "refused 'escape': a link to '/etc', outside the world: not followed" in result.output
    assert "refused 'up': a link to '../../outside', outside the world" in result.output
    assert "refused 'pipe': a special file" in result.output
    assert "refused 'big.bin': 2000000 bytes: past the world's quota" in result.output
    assert sorted(p.name for p in world.iterdir()) == ["inside.txt", "near"]
    assert (world / "near").readlink() == Path("inside.txt")  # a link inside the world is kept
    assert list(outside.iterdir()) == []


async def test_only_content_the_node_lacks_crosses_to_it(tmp_path: Path, labelled: str) -> None:
    (tmp_path / "a.txt").write_text(f"a {tmp_path}\n")  # content no node has seen yet
    (tmp_path / "b.txt").write_text(f"b {tmp_path}\n")
    (tmp_path / "copy.txt").write_text(f"a {tmp_path}\n")  # the same content: sent once
    box = RayNodeSandbox(Placement(labels=LABEL), hidden=[])
    first = await box.run("cat a.txt", cwd=tmp_path, timeout_s=60)
    assert first.output == f"a {tmp_path}\n"
    assert box.fetched[0] == 2
    await box.run("echo made > made.txt", cwd=tmp_path, timeout_s=60)
    assert box.fetched == (0, 0)  # the node's cache holds the world
    (tmp_path / "c.txt").write_text(f"c {tmp_path}\n")
    third = await box.run("cat c.txt made.txt", cwd=tmp_path, timeout_s=60)
    assert third.output == f"c {tmp_path}\nmade\n"
    assert box.fetched[0] == 1  # the new file only (made.txt came from the node)


async def test_a_run_that_may_reach_hosts_is_told_the_network_is_off_on_the_node(
    tmp_path: Path, labelled: str
) -> None:
    box = RayNodeSandbox(Placement(labels=LABEL), hidden=[])
    asked: list[str] = []

    async def record(decision: EgressDecision) -> None:
        asked.append(decision.host)

    hook = policy_hook(EgressPolicy(allow=("example.com",)), record)
    result = await box.run("echo hi", cwd=tmp_path, timeout_s=60, egress=hook)
    assert result.output.startswith("hi\n[network was off on node ")
    assert labelled in result.output
    assert asked == []


@pytest.mark.parametrize(
    ("placement", "named"),
    [
        ({"labels": {"helix.test": "nowhere"}}, "labels helix.test=nowhere"),
        ({"labels": LABEL, "resources": {"GPU": 1}}, "resources GPU=1"),
    ],
)
async def test_a_placement_no_node_can_take_is_refused_at_once(
    tmp_path: Path, ray_cluster: RayCluster, labelled: str, placement: dict[str, Any], named: str
) -> None:
    engine = _engine(tmp_path / "home", ray_cluster)
    blueprint = Blueprint(model="scripted:t", placement=placement)
    with pytest.raises(ConfigError, match=f"no node of the cluster .*{named}") as refused:
        await engine.create("nowhere", blueprint=blueprint, world=tmp_path, auto_approve=True)
    assert "helix.test=raytier" in str(refused.value)  # the live nodes are named
    assert (await engine.store.list_runs()).runs == []  # nothing was created
