"""The agent's words printed as they arrive: wrapped like a block, the rest once at the end."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from helix.api import LocalApi
from helix.cli._screen import Screen
from helix.cli._streamed import StreamedText
from helix.cli._view import RunView
from helix.kernel.log import MemoryEventStore
from helix.providers import ModelAdapter, Scenario, ScriptedModel, TextDelta
from helix.runtime import Blueprint, Engine, ModelDelta, RunSetup


def _console(width: int = 40) -> Console:
    return Console(file=io.StringIO(), width=width, color_system=None, highlight=False)


def _out(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def test_pieces_are_printed_as_they_come_and_wrapped_at_words_beside_the_mark() -> None:
    console = _console()
    streamed = StreamedText(console, depth=0, turn=1)
    streamed.add("The first words ")
    assert _out(console) == "● The first words"  # printed at once, not at the end
    streamed.add("arrive and then more of them arr")
    streamed.add("ive, until the line is full.")
    assert streamed.finish(
        "The first words arrive and then more of them arrive, until the line is full."
    )
    assert _out(console).splitlines() == [
        "● The first words arrive and then more",
        "  of them arrive, until the line is",
        "  full.",
    ]


def test_the_rest_of_the_reply_is_printed_at_its_end_and_newlines_keep_the_gutter() -> None:
    console = _console()
    streamed = StreamedText(console, depth=1, turn=2)
    streamed.add("Two lines:\nthe")
    assert streamed.finish("Two lines:\nthe second one.")
    assert _out(console).splitlines() == ["│ ● Two lines:", "│   the second one."]


def test_a_reply_that_is_not_what_was_shown_is_left_to_be_printed_whole() -> None:
    console = _console()
    streamed = StreamedText(console, depth=0, turn=1)
    streamed.add("Something else")
    assert not streamed.finish("The reply as logged.")
    assert _out(console) == "● Something else\n"  # the line ended; nothing more added


async def test_the_view_prints_pieces_before_the_reply_is_logged_and_the_words_once(
    tmp_path: Path,
) -> None:
    """A real run's events, fed to a live view on a terminal, the pieces in between."""
    reply = "Every word of this reply is shown as it arrives, and only once."
    scenario = Scenario.of({"text": reply})

    def model(_setup: RunSetup) -> ModelAdapter:
        return ScriptedModel(scenario, label="t")

    engine = Engine(MemoryEventStore(), home=tmp_path / "home", model_factory=model, env={})
    world = tmp_path / "world"
    world.mkdir()
    run = await engine.create("say it", blueprint=Blueprint(model="scripted:t"), world=world)
    await engine.drive(run.id)
    api = LocalApi(engine)
    events = [e async for e in api.events(run.id)]
    console = Console(
        file=io.StringIO(), width=60, force_terminal=True, color_system=None, highlight=False
    )
    view = RunView(Screen(console, live=False), api, run.id)
    asked = next(i for i, e in enumerate(events) if e.type == "model.requested")
    early = ModelDelta(run.id, 1, TextDelta(reply[:11]))  # "Every word ": whole words

    for event in events[:asked]:
        await view.add(event)
    view.stream(early)  # before the view showed the call: held
    assert "Every" not in _out(console)
    await view.add(events[asked])
    assert _out(console).endswith("● Every word")  # shown once the call is
    view.stream(ModelDelta(run.id, 1, TextDelta(reply[11:30])))  # "of this reply is sh"
    assert _out(console).endswith("● Every word of this reply is")  # "sh…" waits for its end
    for event in events[asked + 1 :]:  # model.responded: only the rest is printed
        await view.add(event)
    await view.close()

    assert _words(_out(console)).count(_words(reply)) == 1
    responded = [e for e in events if e.type == "model.responded"]
    assert [e.data["text"] for e in responded] == [reply]


def _words(text: str) -> str:
    return " ".join(text.split())
