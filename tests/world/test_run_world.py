"""A real run's world through the engine: browse, diff, rollback, forks, compare, keep.

The engine, the durable SQLite log, the process sandbox and the tools are real; only
the model is scripted. The run changes files with ``write_file``, ``edit_file`` and
shell commands (create, modify, delete, rename, chmod, a binary file); copies of the
world taken by the run itself (``cp -a`` to a folder beside it) are the references the
restores must match byte for byte, modes included.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ConfigError, NotFoundError, RunStateError
from helix.runtime import compare, fork_with_world, keep, rollback
from helix.tools import RecordService

from .conftest import Harness, _call
from .test_store_and_scan import _tree

SHELL_TURN = (
    "printf 'shell\\n' > made.txt && rm old.txt && mv notes/a.txt notes/b.txt"
    " && chmod 755 made.txt && mkdir -p deep/er && printf 'x\\000\\001bin' > deep/er/blob.bin"
    " && cp -a . ../at-turn-2"
)


async def _the_run(h: Harness) -> str:
    (h.world / "keep.txt").write_text("keep\n")
    (h.world / "old.txt").write_text("old\n")
    (h.world / ".gitignore").write_text("*.log\n")
    (h.world / "debug.log").write_text("ignored\n")
    os.chmod(h.world / "old.txt", 0o640)
    return await h.run(
        {
            "text": "files",
            "tool_calls": [
                _call("write_file", path="notes/a.txt", content="one\n"),
                _call("edit_file", path="keep.txt", old="keep", new="KEEP"),
                _call("run_command", command="cp -a . ../at-turn-1"),
            ],
        },
        {"text": "shell", "tool_calls": [_call("run_command", command=SHELL_TURN)]},
        {
            "text": "more",
            "tool_calls": [
                _call("write_file", path="made.txt", content="overwritten\n"),
                _call("run_command", command="echo more >> keep.txt && echo log >> debug.log"),
            ],
        },
        {"text": "done"},
    )


async def test_a_run_can_be_browsed_diffed_and_rolled_back(harness: Harness) -> None:
    h = harness
    run_id = await _the_run(h)
    browser = h.browser
    # The start is the world before the run's first turn.
    start = {i.path for i in await browser.files(run_id, at="start") if i.kind == "file"}
    assert start == {".gitignore", "keep.txt", "old.txt"}  # debug.log is ignored
    one = {i.path: i for i in await browser.files(run_id, at=1)}
    assert await browser.read(run_id, "notes/a.txt", 1) == b"one\n"
    assert await browser.read(run_id, "keep.txt", 1) == b"KEEP\n"
    assert one["notes"].kind == "dir"
    two = {i.path: i for i in await browser.files(run_id, at=2)}
    assert "old.txt" not in two
    assert "notes/a.txt" not in two
    assert await browser.read(run_id, "notes/b.txt", 2) == b"one\n"
    assert two["made.txt"].mode == 0o755
    assert await browser.read(run_id, "deep/er/blob.bin", 2) == b"x\0\1bin"
    assert await browser.read(run_id, "made.txt", 3) == b"overwritten\n"
    assert await browser.read(run_id, "keep.txt", "now") == b"KEEP\nmore\n"

    text = await browser.diff(run_id, "start", "now")
    assert "-keep\n+KEEP\n+more\n" in text
    assert "deleted file mode 640" in text
    assert "Binary files a/deep/er/blob.bin and b/deep/er/blob.bin differ (0 -> 6 bytes)" in text
    assert "debug.log" not in text
    only = await browser.diff(run_id, 1, 2, "made.txt")
    assert only.startswith("diff --helix a/made.txt b/made.txt\nnew file mode 755\n")
    assert "+shell" in only
    assert await browser.diff(run_id, 3, "now") == ""

    # Roll back to a middle turn, then to the start: byte-identical, modes included.
    log_before = await h.engine.store.read(run_id)
    marker = await rollback(h.engine, run_id, 2, by="user:test")
    assert _tree(h.world) == _tree(h.root / "at-turn-2") | {
        "debug.log": _tree(h.world)["debug.log"]
    }
    assert (h.world / "debug.log").read_text() == "ignored\nlog\n"  # ignored: left alone
    assert "made.txt" in marker.restored
    assert [o.tool for o in marker.reverted] == ["run_command", "write_file"]  # last first
    assert await h.engine.store.read(run_id, to_seq=len(log_before) - 1) == log_before
    marker = await rollback(h.engine, run_id, "start", by="user:test")
    assert "notes/b.txt" in marker.removed
    assert (h.world / "old.txt").read_text() == "old\n"
    assert (h.world / "old.txt").stat().st_mode & 0o777 == 0o640
    assert not (h.world / "deep").exists()
    assert (h.world / "keep.txt").read_text() == "keep\n"
    assert await browser.diff(run_id, "start", "now") == ""
    # The rolled-back state is the run's last world now; a turn can still be restored.
    await rollback(h.engine, run_id, 1, by="user:test")
    assert _tree(h.world) == _tree(h.root / "at-turn-1") | {
        "debug.log": _tree(h.world)["debug.log"]
    }
    types = [e.type for e in await h.engine.store.read(run_id)]
    assert types.count("world.rolled_back") == 3


async def test_bad_points_and_paths_change_nothing(harness: Harness) -> None:
    h = harness
    run_id = await _the_run(h)
    before = _tree(h.world)
    head = (await h.engine.store.get_run(run_id)).next_seq
    with pytest.raises(NotFoundError, match="has no turn 9: it has turns 1 to 4"):
        await rollback(h.engine, run_id, 9, by="user:test")
    with pytest.raises(ConfigError, match="outside the world"):
        await h.browser.read(run_id, "../etc/passwd", 1)
    with pytest.raises(ConfigError, match="outside the world"):
        await h.browser.files(run_id, "/etc", "now")
    with pytest.raises(NotFoundError, match="not in the world"):
        await h.browser.read(run_id, "nope.txt", 1)
    with pytest.raises(ConfigError, match="a folder"):
        await h.browser.read(run_id, "notes", 1)
    with pytest.raises(NotFoundError):
        await h.browser.files("run_nope", None, "start")
    assert _tree(h.world) == before
    assert (await h.engine.store.get_run(run_id)).next_seq == head


async def test_a_running_run_cannot_be_rolled_back(harness: Harness) -> None:
    h = harness
    run_id = await _the_run(h)
    async with h.engine.lock(run_id):  # as if another process drove it
        await h.engine.store.append(
            run_id, [_resumed()], expected_seq=(await h.engine.store.get_run(run_id)).next_seq
        )
        with pytest.raises(RunStateError, match="pause it first"):
            await rollback(h.engine, run_id, "start", by="user:test")


def _resumed() -> Any:
    from helix.kernel.events import NewEvent, RunResumed

    return NewEvent(RunResumed(by="user:test"))


async def test_forks_get_their_own_worlds_and_one_can_be_kept(harness: Harness) -> None:
    h = harness
    run_id = await _the_run(h)
    parent_tree = _tree(h.world)
    first = await fork_with_world(h.engine, run_id, 1, message="try A")
    second = await fork_with_world(h.engine, run_id, 1, message="try B")
    assert first.world != second.world != str(h.world)
    at_one = _tree(h.root / "at-turn-1")
    del at_one["debug.log"]  # ignored files are not part of snapshots, nor of forks
    assert _tree(Path(first.world)) == at_one
    await h.drive(
        first.id,
        {"text": "A", "tool_calls": [_call("write_file", path="choice.txt", content="A\n")]},
        {"text": "done A"},
        after_turn=1,
    )
    await h.drive(
        second.id,
        {"text": "B", "tool_calls": [_call("run_command", command="echo B > choice.txt")]},
        {"text": "done B"},
        after_turn=1,
    )
    assert (Path(first.world) / "choice.txt").read_text() == "A\n"
    assert (Path(second.world) / "choice.txt").read_text() == "B\n"
    assert _tree(h.world) == parent_tree  # the parent never saw either branch
    assert (await h.browser.diff(first.id, "start", "now")).count("diff --helix") == 1

    a, b, text = await compare(h.engine, first.id, second.id)
    assert (a.status, b.status) == ("completed", "completed")
    assert "-A\n+B\n" in text

    kept = await keep(h.engine, first.id, by="user:test")
    assert kept.original == run_id
    assert {p: v for p, v in _tree(h.world).items() if p != "debug.log"} == _tree(Path(first.world))
    for owner in (run_id, first.id):
        (event,) = [e for e in await h.engine.store.read(owner) if e.type == "world.kept"]
        assert event.data["branch"] == first.id
    # The original's last world is now the kept one, and the keep can be rolled back.
    assert await h.browser.diff(run_id, "last", "now") == ""
    with pytest.raises(RunStateError, match="nothing to keep"):
        await keep(h.engine, run_id, by="user:test")


async def test_rollback_compensates_drops_and_keep_performs(harness: Harness, web: int) -> None:
    h = harness
    service = RecordService(h.root / "service")
    orders = f"http://127.0.0.1:{web}/orders"
    steps = (
        {
            "text": "act",
            "tool_calls": [
                _call("record_create", name="r", fields={"k": "v"}),
                _call("outbox_send", to="a@example.com", subject="hi", body="hello"),
                _call("read_file", path="x.txt"),
                _call("http_fetch", url=orders),  # a GET changes nothing elsewhere
                _call("http_fetch", url=orders, method="POST", body="{}"),
            ],
        },
        {"text": "done"},
    )
    (h.world / "x.txt").write_text("x")
    run_id = await h.run(*steps)
    assert list(service.records()) == ["rec_1"]
    assert service.sent() == []  # withheld
    marker = await rollback(h.engine, run_id, "start", by="user:test")
    assert service.records() == {}
    assert [(o.tool, o.detail) for o in marker.compensated] == [
        ("record_create", "deleted record rec_1")
    ]
    assert [o.tool for o in marker.dropped] == ["outbox_send"]
    # The POST happened elsewhere and nothing can take it back: said, not skipped.
    assert [(o.tool, o.detail) for o in marker.cannot_undo] == [("http_fetch", f"POST {orders}")]
    settled = [
        e.data["outcome"] for e in await h.engine.store.read(run_id) if e.type == "effect.settled"
    ]
    assert settled == ["dropped", "compensated"]
    again = await rollback(h.engine, run_id, "start", by="user:test")
    assert [o.detail for o in again.compensated] == ["already compensated"]
    assert service.records() == {}

    fork = await fork_with_world(h.engine, run_id, 0)
    await h.drive(
        fork.id,
        {
            "text": "send",
            "tool_calls": [_call("outbox_send", to="b@example.com", subject="s", body="b")],
        },
        {"text": "sent"},
        after_turn=0,
    )
    assert service.sent() == []
    kept = await keep(h.engine, fork.id, by="user:test")
    assert [o.detail for o in kept.performed] == ["sent to b@example.com"]
    assert [m["to"] for m in service.sent()] == ["b@example.com"]


async def test_turns_without_world_tools_record_nothing(harness: Harness) -> None:
    h = harness
    (h.world / "x.txt").write_text("x")
    run_id = await h.run(
        {"text": "look", "tool_calls": [_call("read_file", path="x.txt")]},
        {"text": "write", "tool_calls": [_call("write_file", path="y.txt", content="y")]},
        {"text": "done"},
    )
    events = await h.engine.store.read(run_id)
    snaps = [e for e in events if e.type == "world.snapshotted"]
    assert [(e.turn, e.data["scanned"], sorted(e.data["changes"])) for e in snaps] == [
        (0, True, []),
        (2, False, ["y.txt"]),
    ]
    assert snaps[0].data["base"]
    ends = [e.seq for e in events if e.type == "turn.ended"]
    assert snaps[1].seq == ends[1] - 1  # in the turn's last append, before its end
