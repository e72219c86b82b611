"""Helix's per-turn workload through LangGraph's prebuilt ReAct agent and SQLite saver.

The counterpart of ``_engine._per_turn``: ``turns`` model calls, each but the last
asking for one call of a no-op tool, with the model scripted in-process and the tool
doing nothing, both timing themselves so their own time is subtracted. What is left is
LangGraph's harness: the graph, its channels, the tool node, and the checkpointer.

Imported only when LangGraph is installed (``helix bench`` keeps it optional).
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.prebuilt import create_react_agent
from langgraph.warnings import LangGraphDeprecatedSinceV10
from langsmith import tracing_context

from ._figure import Figure

SUITE = "engine"
SYSTEM = "langgraph"

ROW_OVERHEAD = 32
"""Bytes added per stored row, the same allowance ``_engine._row_bytes`` gives Helix's."""

_TABLES = {
    "checkpoints": ("thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id",
                    "type", "checkpoint", "metadata"),
    "writes": ("thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "task_path", "idx",
               "channel", "type", "value"),
}  # fmt: skip
"""Every column of the saver's two tables (``AsyncSqliteSaver.setup``), counted in full."""


@dataclass
class _Timings:
    """The model's and the tool's own time, to subtract from the invocation's."""

    model_s: list[float] = field(default_factory=list[float])
    tool_s: list[float] = field(default_factory=list[float])


class _ScriptedChatModel(BaseChatModel):
    """Replies as Helix's bench scenario does: ``turns - 1`` tool calls, then text."""

    turns: int
    timings: _Timings
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "helix-bench-scripted"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # The script already knows its one tool; binding would only wrap the model.
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        started = time.perf_counter()
        self.calls += 1
        # Same text, call and usage as ``_engine._scenario``, so both stores hold alike.
        usage = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}
        if self.calls < self.turns:
            call = {"name": "noop", "args": {"path": "a.txt"}, "id": f"call_{self.calls}"}
            message = AIMessage(content="step", tool_calls=[call], usage_metadata=usage)
        else:
            message = AIMessage(content="done", usage_metadata=usage)
        result = ChatResult(generations=[ChatGeneration(message=message)])
        self.timings.model_s.append(time.perf_counter() - started)
        return result

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Without this override the base class would run ``_generate`` in a thread pool,
        # and that hop is not LangGraph's cost (Helix's scripted model is a coroutine).
        return self._generate(messages, stop, **kwargs)


async def measure(turns: int, workdir: Path | None) -> list[Figure]:
    """Run ``turns`` turns through a LangGraph ReAct agent and measure its harness.

    Args:
        turns: Model calls in the run; all but the last ask for one no-op tool call.
        workdir: Where to make the scratch folder for the SQLite file (the system's
            temporary folder when ``None``).

    Returns:
        ``turn_overhead`` (ms per turn: invocation wall time less the model's and the
        tool's own time) and ``bytes_per_turn`` (bytes the checkpointer stored for the
        thread), both with ``params = {"system": "langgraph", "turns": turns}``.
    """
    timings = _Timings()

    @tool
    async def noop(path: str) -> str:
        """Do nothing (the benchmark's tool)."""
        started = time.perf_counter()
        result = "ok"
        timings.tool_s.append(time.perf_counter() - started)
        return result

    model = _ScriptedChatModel(turns=turns, timings=timings)
    thread_id = f"bench-{turns}"
    # A model step and a tool step per turn, the last turn only the model step; the
    # margin keeps the agent's own "remaining steps" guard from cutting the run short.
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "recursion_limit": 2 * turns + 5,
    }
    with tempfile.TemporaryDirectory(dir=workdir, prefix="helix-bench-langgraph-") as tmp:
        path = Path(tmp) / "checkpoints.db"
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            # Deprecated in favour of ``langchain.agents.create_agent``, which needs the
            # whole ``langchain`` package; this is still LangGraph's own prebuilt agent.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
                agent = create_react_agent(model, [noop], checkpointer=saver)
            await saver.setup()  # table creation is set-up, not a turn's cost
            # Tracing switched on in the environment would put HTTP in the figures.
            with tracing_context(enabled=False):
                started = time.perf_counter()
                await agent.ainvoke({"messages": [HumanMessage("benchmark")]}, config)
                elapsed = time.perf_counter() - started
        stored = _stored_bytes(path, thread_id)
    if model.calls != turns or len(timings.tool_s) != turns - 1:
        raise RuntimeError(f"LangGraph ran {model.calls} model calls for {turns} turns")
    overhead_ms = (elapsed - sum(timings.model_s) - sum(timings.tool_s)) * 1000 / turns
    params = {"system": SYSTEM, "turns": turns}
    return [
        Figure(SUITE, "turn_overhead", overhead_ms, "ms", params),
        Figure(SUITE, "bytes_per_turn", stored / turns, "bytes", params),
    ]


def _stored_bytes(path: Path, thread_id: str) -> int:
    """Every stored column's length over the thread's rows, plus a per-row allowance."""
    total = 0
    with sqlite3.connect(path) as conn:
        for table, columns in _TABLES.items():
            lengths = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in columns)
            (size,) = conn.execute(
                f"SELECT coalesce(sum({lengths} + {ROW_OVERHEAD}), 0) FROM {table}"
                " WHERE thread_id = ?",
                (thread_id,),
            ).fetchone()
            total += int(size)
    conn.close()  # the context manager only commits; the file is removed next
    return total
