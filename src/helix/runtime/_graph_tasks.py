"""What a graph's task is given and what it hands back: inputs, reports, its own world.

Pure functions of the graph's folded state, so every incarnation of the conductor
computes the same objective for a task; the one that starts it logs it
(``task.started``), and a resumed attempt reads it back from there.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

from helix.errors import ConflictError, HelixError
from helix.kernel.session import SessionState
from helix.world import ObjectStore, Scanner, materialize

from ._taskgraph import TaskSpec

MAX_INPUT_CHARS = 50_000
"""The most characters of inputs one task is given (longer reports are cut, and said so)."""
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def task_objective(spec: TaskSpec, state: SessionState) -> str:
    """The task's objective, with its inputs (other tasks' reports) and report schema."""
    parts = [spec.objective]
    if spec.inputs:
        given = {name: _input(source, state) for name, source in spec.inputs.items()}
        text = json.dumps(given, indent=2, ensure_ascii=False)
        if len(text) > MAX_INPUT_CHARS:
            text = text[:MAX_INPUT_CHARS] + "\n… (cut: the inputs are longer than this)"
        parts.append(f"Inputs (reports of the tasks this one builds on), as JSON:\n{text}")
    if spec.report is not None:
        schema = json.dumps(spec.report, ensure_ascii=False)
        parts.append(
            "When you are done, reply with only a JSON value matching this JSON Schema"
            f" (your report): {schema}"
        )
    return "\n\n".join(parts)


def _input(source: str, state: SessionState) -> Any:
    task_id, *path = source.split(".")
    value = state.tasks[task_id].report
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def take_report(spec: TaskSpec, summary: str | None) -> tuple[Any, str | None]:
    """The task's report from its run's final reply, and why it is refused (or ``None``)."""
    text = (summary or "").strip()
    if spec.report is None:
        return text, None
    fenced = _FENCED.search(text)
    try:
        value = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return None, "its report is not JSON, and the task asks for JSON matching its schema"
    from jsonschema import Draft202012Validator

    problems = sorted(Draft202012Validator(spec.report).iter_errors(value), key=str)
    if problems:
        where = "/".join(str(p) for p in problems[0].absolute_path) or "(the report)"
        return (
            None,
            f"its report does not match the task's schema at {where}: {problems[0].message}",
        )
    return value, None


async def copy_world(objects: ObjectStore, source: Path, dest: Path) -> None:
    """Make ``dest`` a copy of the world ``source`` as it is now (links never followed).

    A copy left by an attempt that died while making it is made again.
    """
    await asyncio.to_thread(shutil.rmtree, dest, True)

    def copy() -> None:
        manifest = Scanner(source, objects).scan({}).manifest
        made = materialize(objects, manifest, dest)
        if made.conflicts:
            path, detail = next(iter(made.conflicts.items()))
            raise ConflictError(f"the world {source} cannot be copied: {path}: {detail}")

    try:
        await asyncio.to_thread(copy)
    except HelixError:
        await asyncio.to_thread(shutil.rmtree, dest, True)
        raise
