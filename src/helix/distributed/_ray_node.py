"""What runs on the node: fetch what the cache lacks, copy the world, run, say what changed.

``run_on_node`` is the body of the Ray task a placed command is. It runs in a Ray
worker of the chosen node, which is trusted as a member of the cluster (it holds the
cluster's token); the command it runs is not: it runs in that node's bubblewrap (the
``bwrap`` tier, same hardening as on the host) in a private copy of the world, and
what it leaves there is read as data, never followed.

The node keeps a cache of content by digest (``helix.world.ObjectStore``) under
``HELIX_NODE_CACHE`` (default: the system's temporary folder), one per node id, so a
world's files cross the network once per node, and only those that changed after.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from helix.sandbox import BwrapSandbox, CommandResult, tier_status
from helix.world import Entry, ObjectStore, materialize

from ._ray_sync import Row, changes, digest_of, read_regular, walk, written

CACHE_ENV = "HELIX_NODE_CACHE"
"""Where a node keeps its content cache and the commands' private world copies."""


def node_root(node_id: str) -> Path:
    """This node's folder for the cache and the private copies."""
    base = os.environ.get(CACHE_ENV) or os.path.join(tempfile.gettempdir(), "helix-node")
    return Path(base) / node_id


def _sweep(work: Path) -> None:
    """Remove private copies left by workers that died (a cancelled command's)."""
    if not work.is_dir():
        return
    for entry in work.iterdir():
        pid = entry.name.partition("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove(entry)


def _remove(path: Path) -> None:
    def unlock(function: Any, name: str, _error: Any) -> None:
        os.chmod(os.path.dirname(name), 0o700)  # a folder the command made read-only
        function(name)

    if path.exists():
        shutil.rmtree(path, onerror=unlock)


def _fetch(cache: ObjectStore, rows: Sequence[Row], refs: dict[str, Any]) -> tuple[int, int]:
    """Bring the content the cache lacks from the object store: (objects, bytes)."""
    import ray

    missing = sorted({r[3] for r in rows if r[3] and not r[4] and not cache.has(r[3])})
    fetched = 0
    for start in range(0, len(missing), 64):
        batch = missing[start : start + 64]
        for digest, data in zip(batch, ray.get([refs[d] for d in batch]), strict=True):
            if digest_of(data) != digest:
                raise ValueError(f"the content sent for {digest} does not match it")
            cache.put_bytes(data)
            fetched += len(data)
    for row in rows:
        if row[4]:
            cache.put_bytes(os.fsencode(row[4]))
    return len(missing), fetched


async def _attentive(box: BwrapSandbox, request: dict[str, Any], copy: Path) -> CommandResult:
    """Run the command, waking every tenth of a second.

    Ray cancels a running task by raising ``KeyboardInterrupt`` in its thread, which
    Python delivers only while it runs code: the wakes let it arrive while the command
    runs, and ``asyncio.run`` then cancels the command, which kills all it started.
    """
    loop = asyncio.get_running_loop()
    handle: asyncio.TimerHandle | None = None

    def tick() -> None:
        nonlocal handle
        handle = loop.call_later(0.1, tick)

    tick()
    try:
        return await box.run(
            request["command"],
            cwd=copy,
            timeout_s=request["timeout_s"],
            max_output=request["max_output"],
            tmp_bytes=request["tmp_bytes"],
        )
    finally:
        if handle is not None:
            handle.cancel()


def run_on_node(request: dict[str, Any]) -> dict[str, Any]:
    """Run one placed command (the Ray task's body); what happened, as plain data."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    status = tier_status("bwrap")  # not Docker's probe: only bwrap runs here
    if not status.available:
        return {"node": node, "error": f"bubblewrap cannot run on node {node}: {status.reason}"}
    root = node_root(node)
    cache = ObjectStore(root / "objects")
    rows: list[Row] = request["rows"]
    objects, fetched = _fetch(cache, rows, request["refs"])
    _sweep(root / "work")
    (root / "work").mkdir(parents=True, exist_ok=True)
    copy = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root / "work"))
    try:
        sent = {r[0]: Entry(r[3], r[1], r[2], -1) for r in rows}
        os.rmdir(copy)
        materialize(cache, sent, copy)
        known = written(copy, sent)  # its content is the cache's: no need to hash it
        # The copy is shown at the host world's path: a command sees the paths it would
        # see on the host (``pwd``, paths in its output).
        box = BwrapSandbox(shown_at=Path(request["shown_at"]), **request["limits"])
        try:
            result = asyncio.run(_attentive(box, request, copy))
        finally:
            box.close()
        now, _keys = walk(copy, known=known)
        changed, removed = changes(sent, now)
        contents: dict[str, bytes] = {}
        budget = request["max_bytes"]
        refused = dict(now.skipped)
        kept: list[Row] = []
        for row in changed:
            path, _mode, size, digest, target = row
            if digest and not target and digest not in contents:
                if budget is not None and size > budget:
                    refused[path] = f"{size} bytes: past the world's quota, not sent back"
                    continue
                contents[digest] = read_regular(copy / path)
                cache.put_bytes(contents[digest])  # the next command need not fetch it back
                budget = None if budget is None else budget - size
            kept.append(row)
        return {
            "node": node,
            "exit_code": result.exit_code,
            "output": result.output,
            "truncated": result.truncated,
            "timed_out": result.timed_out,
            "duration_ms": result.duration_ms,
            "tmp_full": result.tmp_full,
            "changed": kept,
            "removed": removed,
            "contents": contents,
            "refused": refused,
            "fetched": [objects, fetched],
        }
    finally:
        _remove(copy)
