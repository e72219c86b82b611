"""Realistic event sequences for tests, benchmarks and demos."""

from __future__ import annotations

from helix.kernel.events import (
    GateDecided,
    ModelRequested,
    ModelResponded,
    NewEvent,
    RunCompleted,
    RunCreated,
    RunStarted,
    ToolCall,
    ToolCompleted,
    ToolRequested,
    ToolStarted,
    TurnEnded,
    TurnStarted,
    Usage,
)


def run_created(objective: str = "tidy the README", world: str = "/tmp/world") -> RunCreated:
    """Return a ``run.created`` payload for a scripted run."""
    return RunCreated(objective=objective, model="scripted:demo", world=world)


def turn_events(
    turn: int,
    *,
    calls: int = 1,
    output: str = "ok",
    cost_usd: float | None = 0.001,
    final: bool = False,
) -> list[NewEvent]:
    """Return one whole turn: the model call, ``calls`` tool calls with gates, the end.

    With ``final`` the model asks for no tool and the run completes after the turn.
    """
    calls = 0 if final else calls
    tool_calls = [
        ToolCall(id=f"t{turn}c{i}", name="read_file", args={"path": f"f{i}.txt"})
        for i in range(calls)
    ]
    events = [
        NewEvent(TurnStarted(turn=turn), actor="system", turn=turn),
        NewEvent(ModelRequested(provider="scripted", model="demo"), turn=turn),
        NewEvent(
            ModelResponded(
                text="done" if final else f"turn {turn}",
                tool_calls=tool_calls,
                usage=Usage(input_tokens=100 * turn, output_tokens=20),
                cost_usd=cost_usd,
                latency_ms=12.5,
            ),
            actor="agent",
            turn=turn,
        ),
    ]
    for call in tool_calls:
        events += [
            NewEvent(ToolRequested(call_id=call.id, name=call.name, args=call.args), "agent", turn),
            NewEvent(
                GateDecided(call_id=call.id, gate="boundary", verdict="allow", reason="in world"),
                turn=turn,
            ),
            NewEvent(ToolStarted(call_id=call.id, sandbox="process"), turn=turn),
            NewEvent(
                ToolCompleted(call_id=call.id, ok=True, output=output, duration_ms=1.5),
                turn=turn,
            ),
        ]
    events.append(NewEvent(TurnEnded(turn=turn), turn=turn))
    if final:
        events.append(NewEvent(RunCompleted(summary="done"), turn=turn))
    return events


def session_events(turns: int, *, calls: int = 1, output: str = "ok") -> list[NewEvent]:
    """Return a whole session after ``run.created``: start, ``turns`` turns, completion."""
    events = [NewEvent(RunStarted())]
    for turn in range(1, turns + 1):
        events += turn_events(turn, calls=calls, output=output, final=turn == turns)
    return events
