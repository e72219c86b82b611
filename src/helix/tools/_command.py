"""``run_command``: a shell command in the run's sandbox."""

from __future__ import annotations

from helix.errors import ConfigError
from helix.kernel.events import WorldProcessStarted
from helix.sandbox import DEFAULT_TMP_BYTES

from ._quota import MIB
from ._tool import ToolContext, ToolResult, tool


def _footer(exit_code: int | None, timed_out: bool, limit_s: float) -> str:
    if timed_out:
        return f"[timed out after {limit_s:g}s: the command and everything it started were killed]"
    if exit_code is not None and exit_code < 0:
        return f"[killed by signal {-exit_code}]"
    return f"[exit code {exit_code}]"


@tool(effect="world", command="command", sandboxed=True)
async def run_command(
    ctx: ToolContext, command: str, timeout_s: float | None = None, background: bool = False
) -> ToolResult:
    """Run a shell command (`/bin/sh -c`) in the world directory, in the run's sandbox.

    Standard output and error are returned together, cut with a marker when long,
    followed by the exit code. `timeout_s` may shorten the run's command time limit,
    never lengthen it; on timeout the command and everything it started are killed.
    Input is empty: interactive commands cannot be answered. In a live world
    (`sandbox.live`), `background: true` starts the command and returns at once with
    its id (`p1`, `p2`…): it keeps running between turns; `read_output` reads it.
    """
    if not command.strip():
        return ToolResult(ok=False, output="command is empty")
    if timeout_s is not None and not timeout_s > 0:  # NaN too
        return ToolResult(ok=False, output=f"timeout_s must be positive, not {timeout_s:g}")
    if background:
        return await _start_background(ctx, command)
    limit_s = min(timeout_s or ctx.command_timeout_s, ctx.command_timeout_s)
    try:
        if ctx.live is not None:
            world = await ctx.live.world()
            result = await world.run(command, timeout_s=limit_s, max_output=ctx.max_output)
        else:
            result = await ctx.sandbox.run(
                command,
                cwd=ctx.world,
                timeout_s=limit_s,
                max_output=ctx.max_output,
                egress=ctx.egress,
                tmp_bytes=ctx.tmp_bytes,
            )
    except (OSError, ConfigError) as error:  # e.g. the world directory is gone
        return ToolResult(ok=False, output=f"the command could not start: {error}")
    output = result.output
    separator = "" if not output or output.endswith("\n") else "\n"
    footer = _footer(result.exit_code, result.timed_out, limit_s)
    if result.tmp_full:
        cap = (ctx.tmp_bytes or DEFAULT_TMP_BYTES) / MIB
        footer += (
            f"\n[the sandbox's /tmp cap was hit: /tmp holds at most {cap:g} MiB"
            " (sandbox.tmp_mb); writes past it fail with 'No space left on device']"
        )
    ok = result.exit_code == 0 and not result.timed_out
    return ToolResult(ok=ok, output=f"{output}{separator}{footer}", node=result.node)


async def _start_background(ctx: ToolContext, command: str) -> ToolResult:
    if ctx.live is None:
        return ToolResult(
            ok=False,
            output="background: true needs a live world (the blueprint's `sandbox.live: true`)",
        )
    process = ctx.live.next_process()
    try:
        world = await ctx.live.world()
        await world.start(process, command)
    except (OSError, ConfigError) as error:
        return ToolResult(ok=False, output=f"the command could not start: {error}")
    started = WorldProcessStarted(process=process, command=command, call_id=ctx.call_id)
    return ToolResult(
        ok=True,
        output=f"started {process} in the background; read_output(process={process!r}) reads it",
        events=(started,),
    )
