"""A transcript's blocks as Rich renderables.

The run's header, what was said, each tool call (its mark, why it was asked or denied,
its result, its diff), notes, questions, and the closing summary with what to run next.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

from ._screen import Gutter
from ._screen import text_of as _text
from ._transcript import (
    SUMMARY_WIDTH,
    Call,
    Note,
    Said,
    Transcript,
    exit_code_of,
    printable,
)

if TYPE_CHECKING:
    from helix.api import Run

OUTPUT_LINES = 8
"""The last lines of a call's output shown under it."""
DIFF_LINES = 40
"""Lines of one file's diff shown under the call that changed it."""

_TONES = {"info": "cyan", "good": "green", "warn": "yellow", "bad": "red"}
_NOTE_MARKS = {"info": "·", "good": "✓", "warn": "!", "bad": "✗"}
_OPS = {"create": ("+", "created"), "modify": ("~", "modified"), "delete": ("-", "deleted")}


def header(t: Transcript, *, hint: str | None) -> RenderableType:
    """The run's id, objective, model, world and budget (and ``hint``: how to leave)."""
    budget = "no budget cap" if t.budget_usd is None else f"budget ${t.budget_usd:g}"
    first = Text.assemble(("▶ ", "bold"), (t.run_id, "bold cyan"), "  ", _text(t.objective))
    rest = [t.model or "?", f"world {t.world}" if t.world else "", budget]
    if hint:
        rest.append(hint)
    second = _text("  " + " · ".join(r for r in rest if r), "dim")
    return Group(first, second)


def question(call: Call) -> RenderableType:
    """A call that waits on a person: what it is and why it asks (or what its source asks)."""
    if call.question is not None:
        return Gutter(Text("?", style="bold yellow"), Group(*source_question(call.question)))
    lines: list[RenderableType] = [_call_line(call)]
    lines.extend(_text(_why(reason, "asked"), "yellow") for reason in call.reasons)
    if len(call.summary) >= SUMMARY_WIDTH or "\n" in str(call.args):
        lines.append(_text(_args_in_full(call), "dim"))
    return Gutter(Text("?", style="bold yellow"), Group(*lines))


def source_question(question: dict[str, Any]) -> list[RenderableType]:
    """A source's question: who asks, its message as plain text, the fields it wants."""
    head = f"{question['source']} asks (its words, not Helix's):"
    if question.get("name") == "sampling":
        tokens = (question.get("args") or {}).get("max_tokens")
        head = (
            f"{question['source']} asks the run's model to answer this prompt (up to"
            f" {tokens} tokens, counted against the run's budget; its words, not Helix's):"
        )
    lines: list[RenderableType] = [_text(head, "bold yellow"), _text(str(question["message"]))]
    schema = question.get("schema") or {}
    required = set(schema.get("required") or [])
    for name, spec in (schema.get("properties") or {}).items():
        kind = " | ".join(spec["enum"]) if spec.get("enum") else spec["type"]
        title = f" — {spec['title']}" if spec.get("title") else ""
        need = ", required" if name in required else ""
        lines.append(_text(f"  {name} ({kind}{need}){title}", "dim"))
    if not schema.get("properties"):
        lines.append(_text("  (a plain yes or no)", "dim"))
    return lines


def said(block: Said) -> RenderableType:
    """What the agent (or a person, or the system) said, in full."""
    if block.who == "person":
        return Gutter(Text("»", style="bold magenta"), _text(f"you: {block.text}", "magenta"))
    if block.who == "system":
        return Gutter(Text("·", style="dim"), _text(block.text, "dim"))
    return Gutter(Text("●", style="bold"), _text(block.text))


def note(block: Note) -> RenderableType:
    """A run note, in the colour of its tone, never cut."""
    colour = _TONES[block.tone]
    mark = Text(_NOTE_MARKS[block.tone], style=f"bold {colour}")
    label = {"failed": "failed: ", "completed": "completed: "}.get(block.kind, "")
    return Gutter(mark, _text(label + block.text, colour))


def call_block(
    call: Call, diffs: dict[str, str] | None = None, *, why: bool = True
) -> RenderableType:
    """A tool call: its line with the gates' mark, why if asked or denied, its result, its files."""
    lines: list[RenderableType] = [_call_line(call)]
    if call.verdict == "deny" or (call.verdict == "ask" and why):
        verb, style = ("denied", "red") if call.verdict == "deny" else ("asked", "yellow")
        lines.extend(_text(_why(reason, verb), style) for reason in call.reasons)
    if call.verdict != "deny" and call.decision != "deny":
        lines.extend(_output(call))
    for change in call.files:
        sign, verb = _OPS[change.op]
        lines.append(_text(f"{sign} {change.path} ({verb})", "bold"))
        lines.extend(_diff_lines((diffs or {}).get(change.path, "")))
    lines.extend(_text(line, "yellow") for line in call.asked)
    if call.egress:
        lines.append(_text(f"network: {call.egress}", "dim"))
    if call.child_run_id and call.child_run_id not in call.output:
        lines.append(_text(f"child run {call.child_run_id}", "dim"))
    return Gutter(_mark(call), Group(*lines))


def summary(
    transcript: Transcript,
    record: Run | None,
    *,
    at: int | None = None,
    then: list[str] | None = None,
) -> RenderableType:
    """How the run stands, what it cost, what it changed, and the commands to go on with.

    ``record``: the run as the door has it now (else the transcript's own counts);
    ``at``: a replay cut at that seq (the run went on after it); ``then``: lines said in
    place of the commands (a paused run's reason and the resume that fits it).
    """
    status = record.status if record is not None else transcript.status
    turns = record.turns if record is not None else (transcript.turn or 0)
    cost = record.cost_usd if record is not None else transcript.cost_usd
    tokens_in = record.input_tokens if record is not None else transcript.input_tokens
    tokens_out = record.output_tokens if record is not None else transcript.output_tokens
    files = transcript.files_changed
    colour = {"completed": "green", "failed": "red", "cancelled": "red"}.get(status, "yellow")
    changed = f"{len(files)} file{'s' if len(files) != 1 else ''} changed"
    if files:
        changed += ": " + ", ".join(files[:8]) + (" …" if len(files) > 8 else "")
    first = Text.assemble(
        f"at seq {at}: " if at is not None else "",
        (status, f"bold {colour}"),
        f" · {turns} turn{'s' if turns != 1 else ''} · ${cost:.4f}"
        f" ({tokens_in:,} tokens in, {tokens_out:,} out) · ",
        _text(changed),
    )
    if then is not None:
        return Group(Text(""), first, *(_text(line, "yellow") for line in then))
    commands = next_commands(transcript, status if at is None else "replayed")
    lines = [
        _text(("next:  " if i == 0 else "       ") + command, "dim")
        for i, command in enumerate(commands)
    ]
    return Group(Text(""), first, *lines)


def next_commands(transcript: Transcript, status: str) -> list[str]:
    """The commands a person would run next, for a run in ``status``.

    ``replayed``: a replay cut short (the run's status now is another matter).
    """
    run = transcript.run_id
    ended = [t for t in transcript.ended_turns if t >= 1]
    if status == "replayed":
        return [f"helix fork {run} --turn {ended[-1] if ended else 0}", f"helix replay {run}"]
    if status == "paused":
        asked = [f"helix approve {run}", f"helix deny {run}"] if transcript.pending() else []
        return [*asked, f"helix resume {run}", f"helix logs {run}"]
    if status in ("running", "waiting", "queued"):
        cards = transcript.waiting_cards()
        choose = [f"helix choose {run} {cards[0].component_id} NUMBER"] if cards else []
        return [*choose, f"helix logs {run} --follow", f"helix pause {run}", f"helix cancel {run}"]
    found = [f"helix diff {run}"] if transcript.files_changed else []
    fork_at = ended[-2] if len(ended) >= 2 else 0  # the last turn, done again differently
    return [*found, f"helix fork {run} --turn {fork_at}", f"helix replay {run}"]


# -- pieces ---------------------------------------------------------------------------------


def repeats(transcript: Transcript, block: Note) -> bool:
    """Whether a completion's summary is just the agent's last words, shown already."""
    said_last = [b for b in transcript.blocks if isinstance(b, Said) and b.who == "agent"]
    return bool(said_last) and said_last[-1].text.strip() == block.text.strip()


def _mark(call: Call) -> Text:
    if call.state == "denied":
        return Text("✗", style="bold red")
    if call.verdict == "ask":
        return Text("✓", style="bold yellow")
    return Text("✓", style="bold green")


def _call_line(call: Call) -> Text:
    line = Text.assemble((printable(call.name), "bold"), " ", _text(call.summary, "cyan"))
    tail = _state_words(call)
    if tail:
        line.append("  ")
        line.append_text(tail)
    return line


def _why(reason: str, verb: str) -> str:
    """``gate: reason`` as ``asked by the gate gate: reason``."""
    gate, _, why = reason.partition(": ")
    return f"{verb} by the {gate} gate: {why}" if why else f"{verb}: {reason}"


def _state_words(call: Call) -> Text:
    words: list[tuple[str, str]] = []
    if call.decision is not None and call.decided_by is not None:
        verb = "allowed" if call.decision == "allow" else "denied"
        who = "auto-approve" if call.auto and call.decision == "allow" else call.decided_by
        words.append((f"{verb} by {who}", "yellow" if call.decision == "allow" else "red"))
    elif call.state == "denied":
        words.append(("denied", "red"))
    if call.exit_code is not None:
        words.append((f"exit {call.exit_code}", "green" if call.exit_code == 0 else "red"))
    elif call.state == "error":
        words.append(("failed", "red"))
    elif call.state == "interrupted":
        words.append(("interrupted", "yellow"))
    text = Text()
    for i, (word, style) in enumerate(words):
        text.append(("" if i == 0 else " · ") + word, style=style)
    return text


def _output(call: Call) -> list[RenderableType]:
    lines = call.output.rstrip("\n").splitlines()
    if lines and exit_code_of(lines[-1]) is not None:
        lines = lines[:-1]  # the footer: said as "exit N" on the call's line
    if call.files and len(lines) == 1:
        return []  # "created a.txt (6 bytes)": the file line below says it
    style = "red" if call.state in ("error", "interrupted") else "dim"
    shown = lines[-OUTPUT_LINES:]
    out: list[RenderableType] = []
    if len(lines) > len(shown):
        out.append(_text(f"… {len(lines) - len(shown)} lines above", "dim"))
    out.extend(_text(line, style) for line in shown)
    return out


def _diff_lines(diff: str) -> Iterable[RenderableType]:
    body = [
        line
        for line in diff.splitlines()
        if not line.startswith(("diff --helix", "--- ", "+++ ", "new file mode", "deleted file"))
    ]
    for line in body[:DIFF_LINES]:
        if line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        elif line.startswith("@@"):
            style = "cyan"
        else:
            style = "dim"
        yield _text(f"  {line}", style)
    if len(body) > DIFF_LINES:
        yield _text(f"  … {len(body) - DIFF_LINES} more lines (helix diff shows all)", "dim")


def _args_in_full(call: Call) -> str:
    import json

    text = json.dumps(call.args, indent=2, ensure_ascii=False)
    lines = text.splitlines()
    return "\n".join(lines[:20] + ([f"… {len(lines) - 20} more lines"] if len(lines) > 20 else []))
