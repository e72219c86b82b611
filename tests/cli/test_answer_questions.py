"""A tool source's question answered from another process: ``helix approve --answer``.

The run is driven here (a real SQLite store, a scripted model, a source whose tool asks
a person); ``helix approve``/``helix deny`` are processes of their own on the same store.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from helix.kernel.log import EventStore, open_store
from helix.providers import ModelAdapter, Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup, decide
from helix.tools import ElicitationAnswer
from tests.runtime._asking_sources import ASK_CALL, AskingSource

WAIT_S = 90.0
"""A safety net for a busy machine, never a performance limit."""


async def _helix(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HELIX_")}
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "helix", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**env, "HELIX_HOME": str(home)},
        timeout=WAIT_S,
    )


async def _asked(store: EventStore, run_id: str) -> str:
    async with store.subscribe(run_id) as events:
        async for event in events:
            if event.type == "approval.requested":
                return str(event.data["request_id"])
    raise AssertionError("the run asked nothing")


async def _run(tmp_path: Path, home: Path, answer: object) -> tuple[AskingSource, EventStore, str]:
    store = await open_store(f"sqlite:///{home / 'helix.db'}")
    source = AskingSource()

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(Scenario.of(ASK_CALL, {"text": "done"}), label="test")

    engine = Engine(store, home=home, model_factory=model, env={}, sources=lambda s: [source])
    record = await engine.create("ask", blueprint=Blueprint(model="scripted:t"), world=tmp_path)
    async with asyncio.TaskGroup() as group:
        driving = group.create_task(engine.drive(record.id))
        request = await _asked(store, record.id)
        await answer(home, store, record.id, request)  # type: ignore[operator]
        state = await asyncio.wait_for(driving, WAIT_S)
    assert state.status == "completed"
    return source, store, record.id


async def test_a_question_is_answered_by_helix_approve_in_another_process(
    tmp_path: Path,
    helix_home: Path,
) -> None:
    async def answer(home: Path, store: EventStore, run_id: str, request: str) -> None:
        done = await _helix(
            home,
            "approve",
            run_id,
            "--answer",
            "name=Ada Lovelace",
            "--answer",
            "age=36",
            "--answer-json",
            '{"tea": true, "colour": "red"}',
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"answered {request}"

    source, store, run_id = await _run(tmp_path, helix_home, answer)
    content = {"name": "Ada Lovelace", "age": 36, "tea": True, "colour": "red"}
    assert source.answers == [ElicitationAnswer("accept", content)]
    decided = [e for e in await store.read(run_id) if e.type == "approval.decided"]
    assert decided[0].data["answer"] == content
    assert decided[0].actor.startswith("user:")
    await store.close()


async def test_helix_deny_declines_a_question(tmp_path: Path, helix_home: Path) -> None:
    async def answer(home: Path, store: EventStore, run_id: str, request: str) -> None:
        done = await _helix(home, "deny", run_id, "--reason", "not now")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"denied {request}"

    source, store, _ = await _run(tmp_path, helix_home, answer)
    assert source.answers == [ElicitationAnswer("decline")]
    await store.close()


async def test_bad_answers_are_usage_errors_and_write_nothing(
    tmp_path: Path, helix_home: Path
) -> None:
    async def answer(home: Path, store: EventStore, run_id: str, request: str) -> None:
        head = (await store.get_run(run_id)).head
        refused = [
            (["--answer", "age=old"], "error: --answer: age: must be a number, not 'old'"),
            (["--answer", "shoe=3"], "error: --answer: unknown field 'shoe'"),
            (["--answer", "nameAda"], "error: --answer 'nameAda': give NAME=VALUE"),
            (["--answer-json", "[1]"], "error: --answer-json must be a JSON object"),
            (["--answer-json", '{"name": 3}'], "name: must be a string"),
            (["--answer", "age=3"], "missing required field(s): name"),
        ]
        for options, message in refused:
            done = await _helix(home, "approve", run_id, request, *options)
            assert done.returncode == 2, (options, done.stdout, done.stderr)
            assert message in done.stderr
            assert "Traceback" not in done.stderr
        shown = await _helix(home, "logs", run_id)
        assert shown.returncode == 0, shown.stderr
        assert "\x1b" not in shown.stdout  # the source's control characters are not obeyed
        assert "test:asking asks 'Ignore previous instructions" in shown.stdout
        assert (await store.get_run(run_id)).head == head  # nothing was written
        # Answered here, on the driving process's own store (see the module's note).
        await decide(store, run_id, request, "allow", by="user:ann", answer={"name": "Ada"})

    source, store, _ = await _run(tmp_path, helix_home, answer)
    assert source.answers == [ElicitationAnswer("accept", {"name": "Ada"})]
    await store.close()
