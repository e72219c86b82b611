"""The live-world events: in the vocabulary, checked, and folded into ``state.live``."""

from __future__ import annotations

import pytest

from helix.errors import InvalidPayloadError
from helix.kernel.events import (
    DEFAULT_REGISTRY,
    LIVE_PAYLOADS,
    NewEvent,
    WorldCheckpointed,
    WorldProcessEnded,
    WorldProcessStarted,
    WorldRestored,
    WorldStopped,
)
from helix.kernel.log import MemoryEventStore
from helix.kernel.session import replay_run
from helix.testing import run_created

IMAGE = "c" * 64


def test_the_vocabulary_has_them() -> None:
    mapping = DEFAULT_REGISTRY.json_schema()["discriminator"]["mapping"]
    for kind in LIVE_PAYLOADS:
        assert kind.TYPE in mapping
    assert {"world.checkpointed", "world.restored"} <= {k.TYPE for k in LIVE_PAYLOADS}


@pytest.mark.parametrize(
    ("kind", "data"),
    [
        ("world.process_started", {"process": "x1", "command": "c", "call_id": "c"}),
        ("world.process_started", {"process": "p0", "command": "c", "call_id": "c"}),
        ("world.process_ended", {"process": "p1", "reason": "vanished"}),
        ("world.checkpointed", {"tier": "gvisor", "image": "nope", "size_bytes": 1, "seconds": 0,
                                "reason": "paused"}),
        ("world.checkpointed", {"tier": "gvisor", "image": IMAGE, "size_bytes": -1, "seconds": 0,
                                "reason": "paused"}),
        ("world.stopped", {"tier": "process", "reason": "bored"}),
    ],
)  # fmt: skip
def test_malformed_payloads_are_refused(kind: str, data: dict[str, object]) -> None:
    with pytest.raises(InvalidPayloadError):
        DEFAULT_REGISTRY.parse(kind, data)


async def test_the_fold_follows_processes_and_images() -> None:
    store = MemoryEventStore()
    await store.create_run(run_created(), run_id="r")
    seq = await store.append(
        "r",
        [
            NewEvent(WorldProcessStarted(process="p1", command="serve", call_id="t1c0"), turn=1),
            NewEvent(WorldProcessStarted(process="p2", command="echo", call_id="t1c1"), turn=1),
            NewEvent(WorldProcessEnded(process="p2", exit_code=0, reason="exited"), turn=1),
        ],
        expected_seq=1,
    )
    live = (await replay_run(store, "r")).live
    assert live.running() == ["p1"]
    assert live.next_id() == "p3"
    assert (live.processes["p2"].exit_code, live.processes["p1"].turn) == (0, 1)
    checkpointed = WorldCheckpointed(
        tier="gvisor", image=IMAGE, size_bytes=10, seconds=0.1, processes=["p1"], reason="paused"
    )
    seq = await store.append("r", [NewEvent(checkpointed)], expected_seq=seq)
    live = (await replay_run(store, "r")).live
    assert (live.image, live.tier, live.running()) == (IMAGE, "gvisor", ["p1"])
    restored = WorldRestored(tier="gvisor", image=IMAGE, seconds=0.2)
    seq = await store.append("r", [NewEvent(restored)], expected_seq=seq)
    assert (await replay_run(store, "r")).live.image is None
    await store.append(
        "r", [NewEvent(WorldStopped(tier="gvisor", reason="ended"))], expected_seq=seq
    )
    live = (await replay_run(store, "r")).live
    assert live.running() == []
    assert live.processes["p1"].ended == "world_stopped"
