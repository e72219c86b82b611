"""Plugin figures (for ``helix bench extension``): loading plugins, and hot reload.

* ``plugin_load_ms``: a fresh ``Plugins`` finding, loading and checking every plugin
  here (the installed entry points, and a development folder with a tool, a gate and
  a component) and activating them: what a process pays the first time a blueprint
  names a plugin. The median of ``loads`` tries.
* ``reload_to_serving_ms``: from writing a folder plugin's file to a call of its tool
  answering from the new version, through a run's ``PluginSource`` with the watcher
  looking every ``poll_s`` (in a run the new version then serves from the next turn
  boundary). The median of ``reloads`` edits; the poll interval bounds it from below
  on average by half of ``poll_s``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from helix.kernel.events import Payload
from helix.plugins import Plugins, PluginSource
from helix.sandbox import ProcessSandbox
from helix.tools import SourceHost, ToolContext

from ._figure import Figure

SUITE = "extension"

_PLUGIN = '''
from helix.gates import Decision
from helix.plugins import Plugin, PluginComponent
from helix.tools import ToolContext, ToolResult, tool


@tool(read_only=True, effect="none")
async def answer(ctx: ToolContext) -> ToolResult:
    """Say which edit this is."""
    return ToolResult(ok=True, output="edit {edit}")


class Quiet:
    name = "bench.quiet"

    async def __call__(self, call, ctx):
        return Decision("allow", "quiet")


plugin = Plugin(
    name="bench",
    version="1.0",
    tools=(answer,),
    gates=(Quiet(),),
    components=(PluginComponent("bench.card", {{"type": "object"}}),),
)
'''


@dataclass(frozen=True, slots=True)
class PluginSizes:
    """How much work each measurement does."""

    loads: int = 30
    reloads: int = 15
    poll_s: float = 0.02

    @classmethod
    def quick(cls) -> PluginSizes:
        """A smoke test's sizes."""
        return cls(loads=3, reloads=3)


async def plugin_figures(sizes: PluginSizes | None = None) -> list[Figure]:
    """Measure ``plugin_load_ms`` and ``reload_to_serving_ms`` (see the module's docs)."""
    sizes = sizes or PluginSizes()
    with tempfile.TemporaryDirectory(prefix="helix-bench-plugins-") as folder:
        root = Path(folder)
        _write(root, 0)
        env = {"HELIX_PLUGINS": str(root / "plugins")}
        loads: list[float] = []
        count = 0
        for _ in range(sizes.loads):
            plugins = Plugins(home=root / "home", env=env)
            began = time.perf_counter()
            await plugins.refresh()
            loads.append((time.perf_counter() - began) * 1000)
            count = sum(1 for info in plugins.listing() if info.status == "active")
        reloads = await _reloads(root, env, sizes)
    return [
        Figure(
            SUITE,
            "plugin_load_ms",
            statistics.median(loads),
            "ms",
            {"plugins": count, "loads": sizes.loads},
        ),
        Figure(
            SUITE,
            "reload_to_serving_ms",
            statistics.median(reloads),
            "ms",
            {"poll_s": sizes.poll_s, "reloads": sizes.reloads},
        ),
    ]


async def _reloads(root: Path, env: dict[str, str], sizes: PluginSizes) -> list[float]:
    plugins = Plugins(home=root / "home", env=env, poll_s=sizes.poll_s)
    source = PluginSource(plugins, "bench")
    changed = asyncio.Event()
    sandbox = ProcessSandbox()

    async def record(payload: Payload) -> None:
        return None

    host = SourceHost(
        run_id="bench",
        world=root,
        sandbox=sandbox,
        env={},
        record=record,
        changed=lambda name: changed.set(),
    )
    ctx = ToolContext(run_id="bench", call_id="c", world=root, sandbox=sandbox)
    times: list[float] = []
    await source.open(host)
    try:
        for edit in range(1, sizes.reloads + 1):
            changed.clear()
            began = time.perf_counter()
            _write(root, edit)
            while True:
                await changed.wait()
                changed.clear()
                result = await source.tools()[0].call(ctx, {})
                if result.output == f"edit {edit}":
                    break
            times.append((time.perf_counter() - began) * 1000)
    finally:
        await source.close()
        sandbox.close()
    return times


def _write(root: Path, edit: int) -> None:
    folder = root / "plugins" / "bench"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.py").write_text(textwrap.dedent(_PLUGIN.format(edit=edit)))
