"""``helix run`` streams the agent's words to a terminal as they arrive, and shows them once.

The run is driven in the ``helix`` process (the embedded engine) under a pseudo-terminal
(see ``_terminal``), against the mock model: on a terminal its model calls stream, and
the words the view printed as they came are not printed again when the reply is logged.
With ``--json`` nothing streams and the output is the events alone.
"""

from __future__ import annotations

import json
import re

from ._terminal import Terminal
from .conftest import MODEL, WAIT_S, Helix, of_type

SPOKEN = (
    "Here is the plan, word by word: read the notes, count their lines, write the"
    " count down, and then say so; this reply is long enough to arrive in many pieces"
    " and to be wrapped over more than one line of the terminal it is shown on."
)
DONE = "All done: the count is written down in count.txt."


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_words_appear_as_they_arrive_and_only_once(helix: Helix) -> None:
    helix.play(
        {"text": SPOKEN, "tool_calls": [
            {"name": "write_file", "args": {"path": "count.txt", "content": "2\n"}}]},
        {"text": DONE},
    )  # fmt: skip
    terminal = Terminal(
        ["run", "count the notes", "--model", MODEL, "--dir", str(helix.world)],
        helix.env,
        columns=80,
    )
    try:
        assert terminal.finish(WAIT_S) == 0
    finally:
        terminal.close()
    text = terminal.text
    assert [r.stream for r in helix.model_requests] == [True, True]  # streamed: a terminal
    assert _words(text).count(_words(SPOKEN)) == 1
    assert text.count("● All done: the count is written down in count.txt.") == 1
    lines = [line for line in text.splitlines() if line.strip()]
    first = next(i for i, line in enumerate(lines) if line.startswith("● Here is the plan"))
    assert len(lines[first]) <= 80
    assert lines[first + 1].startswith("  ")  # wrapped beside the mark, as a block is
    assert "✓ write_file path=count.txt" in text
    assert "completed · 2 turns" in text
    assert (helix.world / "count.txt").read_text() == "2\n"
    assert "Traceback" not in terminal.raw
    run_id = re.search(r"▶ (run_[0-9a-f]+)", text)
    assert run_id is not None
    said = [e["data"]["text"] for e in of_type(helix.logs(run_id.group(1)), "model.responded")]
    assert said == [SPOKEN, DONE]  # the log holds the whole replies, as ever


def test_json_output_is_the_events_and_nothing_streams(helix: Helix) -> None:
    helix.play({"text": DONE})
    result = helix("run", "say it", "--model", MODEL, "--dir", str(helix.world), "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["type"] for e in events][-1] == "run.completed"
    (said,) = of_type(events, "model.responded")
    assert said["data"]["text"] == DONE
    assert [r.stream for r in helix.model_requests] == [False]
