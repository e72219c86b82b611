"""The log holds every MCP call and result: replaying or forking a run needs no server."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from helix.kernel.session import replay_run
from helix.runtime import fork_with_world
from helix.testing import mcp_test_server_argv

from .conftest import DONE, call, run_with, stdio_server


async def test_a_run_replays_and_forks_with_its_server_gone(tmp_path: Path) -> None:
    script = tmp_path / "serve.sh"
    argv = " ".join(mcp_test_server_argv("stdio"))
    script.write_text(f"#!/bin/sh\nexec {argv}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    server = {**stdio_server(), "command": str(script), "args": []}
    steps = [call("t__echo", "a", text="one"), call("t__echo", "b", text="two"), DONE]
    ran = await run_with(tmp_path, steps, [server])
    assert ran.status == "completed", ran.error
    os.remove(script)  # the server cannot be started any more

    state = await replay_run(ran.engine.store, ran.run_id)
    assert state.status == "completed"
    requested = [(d["name"], d["args"]) for d in ran.of("tool.requested")]
    assert requested == [("t__echo", {"text": "one"}), ("t__echo", {"text": "two"})]
    assert [d["output"] for d in ran.of("tool.completed")] == ["one", "two"]

    fork = await fork_with_world(ran.engine, ran.run_id, 1, message="again")
    forked = await replay_run(ran.engine.store, fork.id)
    assert forked.turn == 1
    # Driving the fork on would start the server again: it is gone, so the run says so.
    state = await ran.engine.drive(fork.id)
    assert state.status == "failed"
    failed = [e.data for e in await ran.engine.store.read(fork.id) if e.type == "run.failed"]
    assert "mcp:t" in failed[0]["error"]
