"""Dialogs that ask before acting: a new run, fork, rollback, yes/no, a question's answer.

A tool source's question is answered one field per line, typed by its schema. Bad input
(a turn that is not a number, a turn the run never reached, a rollback while the run
runs, a field that does not fit) is said in the dialog, which stays open to fix it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from helix.cli._screen import text_of
from helix.errors import HelixError

if TYPE_CHECKING:
    from helix.api import Approval, Point

    from ._app import HelixTui


R = TypeVar("R")


class Dialog(ModalScreen[R]):
    """A box with fields, an error line, and OK / Cancel (Escape cancels)."""

    DEFAULT_CSS = "Dialog { align: center middle; }"
    BINDINGS = [Binding("escape", "dismiss_none", "cancel")]
    OK = "OK"

    @property
    def tui(self) -> HelixTui:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def fields(self) -> ComposeResult:
        """The dialog's own widgets."""
        yield from ()

    def compose(self) -> ComposeResult:
        """Fields, error line, buttons."""
        with Vertical(classes="dialog"):
            yield from self.fields()
            yield Static("", id="error", classes="error")
            with Horizontal():
                yield Button(self.OK, id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Focus the first field."""
        self.focus_next()

    def show_error(self, message: str) -> None:
        """Say what is wrong, in the dialog and in the app's errors."""
        self.query_one("#error", Static).update(text_of(message))
        self.tui.errors.append(message)

    def action_dismiss_none(self) -> None:
        """Close without acting."""
        self.dismiss(None)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """OK acts; Cancel closes."""
        if event.button.id == "ok":
            await self.confirm()
        else:
            self.dismiss(None)

    async def on_input_submitted(self) -> None:
        """Enter in a field is OK."""
        await self.confirm()

    async def confirm(self) -> None:
        """Act on the fields (overridden)."""
        raise NotImplementedError

    def value(self, field: str) -> str:
        """A field's text, trimmed."""
        return self.query_one(f"#{field}", Input).value.strip()


def parse_point(text: str) -> Point:
    """``start``, ``now`` or a turn number; ``ValueError`` with a plain message otherwise."""
    if text in ("start", "now", "last"):
        return text  # type: ignore[return-value]
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a turn: give a number, or start")
    return int(text)


class ConfirmDialog(Dialog[bool]):
    """Yes or no."""

    OK = "Yes"

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def fields(self) -> ComposeResult:
        """The question."""
        yield Label(text_of(self.question))

    async def confirm(self) -> None:
        """Yes."""
        self.dismiss(True)


class NewRunDialog(Dialog[str]):
    """Start a run: an objective, optionally a model. Answers the new run's id."""

    OK = "Start"

    def fields(self) -> ComposeResult:
        """Objective and model."""
        yield Label("New run")
        yield Input(placeholder="objective: what the agent should do", id="objective")
        yield Input(placeholder="model (default: the configured one)", id="model")

    async def confirm(self) -> None:
        """Create the run (driven here in embedded mode)."""
        objective, model = self.value("objective"), self.value("model") or None
        if not objective:
            self.show_error("give an objective")
            return
        try:
            run = await self.tui.api.create(objective, model=model)
        except HelixError as error:
            self.show_error(f"cannot start: {error}")
            return
        self.tui.drive_queued()
        self.dismiss(run.id)


class ForkDialog(Dialog[str]):
    """Fork a run where a turn ended, with a message. Answers the fork's id."""

    OK = "Fork"

    def __init__(self, run_id: str, turn: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.turn = turn

    def fields(self) -> ComposeResult:
        """Turn and message."""
        yield Label(text_of(f"Fork {self.run_id} where a turn ended (0: the start)"))
        yield Input(str(self.turn), placeholder="turn", id="turn")
        yield Input(placeholder="message for the fork (optional)", id="message")

    async def confirm(self) -> None:
        """Fork; the fork is driven (here in embedded mode, else by the server)."""
        text = self.value("turn")
        if not text.isdigit():
            self.show_error(f"{text!r} is not a turn: give a number (0: the start)")
            return
        try:
            fork = await self.tui.api.fork(
                self.run_id, turn=int(text), message=self.value("message") or None
            )
        except HelixError as error:
            self.show_error(f"cannot fork: {error}")
            return
        self.tui.drive_queued()
        self.dismiss(fork.id)


class RollbackDialog(Dialog[bool]):
    """Restore the run's world to its start or a turn's end."""

    OK = "Roll back"

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id

    def fields(self) -> ComposeResult:
        """Where to."""
        yield Label(text_of(f"Roll {self.run_id}'s world back to (a turn, or start):"))
        yield Input("start", id="to")
        yield Label("Files changed since then are restored; this is logged.")

    async def confirm(self) -> None:
        """Roll back."""
        try:
            to = parse_point(self.value("to"))
        except ValueError as error:
            self.show_error(str(error))
            return
        try:
            done = await self.tui.api.rollback(self.run_id, to=to)
        except HelixError as error:
            self.show_error(f"cannot roll back: {error}")
            return
        changed = len(done.restored) + len(done.removed)
        self.tui.notify(f"rolled back to turn {done.to_turn}: {changed} paths restored")
        self.dismiss(True)


class AnswerDialog(Dialog[bool]):
    """Answer a source's question: its message (as text), then a line for each field."""

    OK = "Answer"

    def __init__(self, run_id: str, approval: Approval) -> None:
        super().__init__()
        self.run_id = run_id
        self.approval = approval
        question = approval.question
        self.schema: dict[str, Any] = {} if question is None else question.fields

    def fields(self) -> ComposeResult:
        """The question, and an input per field (its name, kind, whether it is required)."""
        question = self.approval.question
        assert question is not None
        yield Label(text_of(f"{question.source} asks (its words, not Helix's):"))
        yield Static(text_of(question.message))
        required = set(self.schema.get("required") or [])
        for name, spec in (self.schema.get("properties") or {}).items():
            kind = "/".join(spec["enum"]) if spec.get("enum") else spec["type"]
            need = "required" if name in required else "optional"
            title = f" — {spec['title']}" if spec.get("title") else ""
            yield Input(placeholder=f"{name} ({kind}, {need}){title}", id=f"field-{name}")

    async def confirm(self) -> None:
        """Send the answer, each field typed and checked first (empty optional: left out)."""
        from helix.kernel.events import answer_problem, parse_field

        answer: dict[str, Any] = {}
        try:
            for name in self.schema.get("properties") or {}:
                text = self.query_one(f"#field-{name}", Input).value
                if text != "":
                    answer[name] = parse_field(self.schema, name, text)
        except ValueError as error:
            self.show_error(str(error))
            return
        problem = answer_problem(self.schema, answer)
        if problem is not None:
            self.show_error(problem)
            return
        try:
            await self.tui.api.decide(self.run_id, self.approval.request_id, "allow", answer=answer)
        except HelixError as error:
            self.show_error(f"not recorded: {error}")
            return
        self.dismiss(True)
