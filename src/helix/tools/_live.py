"""``read_output`` and ``stop_process``: the background processes of a live world.

A run whose blueprint says ``sandbox.live: true`` keeps one sandbox for its world, and
``run_command`` with ``background: true`` starts a process there that outlives the
call (a dev server, a watcher). These two tools read what it wrote and end it. They
are offered only to live runs.
"""

from __future__ import annotations

from helix.errors import ConfigError
from helix.kernel.events import Payload, WorldProcessEnded

from ._tool import ToolContext, ToolResult, tool

NOT_LIVE = "this run's world is not live: background processes need `sandbox.live: true`"


@tool(read_only=True, effect="none", sandboxed=True)
async def read_output(ctx: ToolContext, process: str, offset: int = 0) -> ToolResult:
    """Read what a background process (`p1`, `p2`…) has written, from byte `offset` on.

    The answer says whether it still runs (or its exit code), then its output from
    `offset`, cut at the output limit; read on from the `next offset` it gives.
    """
    if ctx.live is None:
        return ToolResult(ok=False, output=NOT_LIVE)
    try:
        world = await ctx.live.world()
        page = await world.output(process, offset=offset, max_bytes=ctx.max_output)
    except ConfigError as error:
        return ToolResult(ok=False, output=str(error))
    status = "running" if page.running else f"exited with code {page.exit_code}"
    more = page.size - page.next_offset
    header = (
        f"[{process}: {status}; bytes {page.offset}-{page.next_offset} of {page.size};"
        f" next offset {page.next_offset}{f', {more} more bytes' if more > 0 else ''}]"
    )
    events: tuple[Payload, ...] = ()
    if not page.running and ctx.live.is_running(process):
        events = (WorldProcessEnded(process=process, exit_code=page.exit_code, reason="exited"),)
    return ToolResult(ok=True, output=f"{header}\n{page.text}", events=events)


@tool(idempotent=True, effect="world", sandboxed=True)
async def stop_process(ctx: ToolContext, process: str) -> ToolResult:
    """End a background process (`p1`, `p2`…) and everything it started."""
    if ctx.live is None:
        return ToolResult(ok=False, output=NOT_LIVE)
    try:
        world = await ctx.live.world()
        answer = await world.stop(process)
        page = await world.output(process, offset=0, max_bytes=0)
    except ConfigError as error:
        return ToolResult(ok=False, output=str(error))
    events: tuple[Payload, ...] = ()
    if ctx.live.is_running(process):
        reason = "stopped" if answer == "stopped" else "exited"
        events = (WorldProcessEnded(process=process, exit_code=page.exit_code, reason=reason),)
    said = "stopped" if answer == "stopped" else f"had already ended (code {page.exit_code})"
    return ToolResult(ok=True, output=f"{process} {said}", events=events)


LIVE_TOOLS = (read_output, stop_process)
"""The tools offered to runs whose world is live."""
