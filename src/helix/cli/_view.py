"""A run drawn on a terminal: what ``helix run``, ``resume``, ``fork`` and ``replay`` show.

Events are folded into a ``Transcript``; each block is printed once it is complete:
the agent's text in full, a tool call when it has its result (and the files it
changed, with their diff), a run note at once. A call that waits on a person is shown
as a question first. While the model thinks or a tool runs, a spinner says so with the
time elapsed and the spend (on a terminal only: captured output gets no control codes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.text import Text

from helix.errors import HelixError

from ._blocks import call_block, header, note, question, repeats, said, summary
from ._screen import Screen
from ._shown import choice_made, choice_wait, shown_block
from ._transcript import Block, Call, Note, Said, Shown, Transcript

if TYPE_CHECKING:
    from helix.api import HelixApi, Point, RunEvent
    from helix.runtime import ModelDelta

    from ._streamed import StreamedText


class RunView:
    """One run's events as a person reads them, printed as they come."""

    def __init__(
        self,
        screen: Screen,
        api: HelixApi,
        run_id: str,
        *,
        depth: int = 0,
        after: int = -1,
        live: bool = True,
        waits: bool = False,
    ) -> None:
        self.screen = screen
        self.waits = waits
        """Whether the watch waits at a pause for a resume from elsewhere (a spinner says so)."""
        self.api = api
        self.run_id = run_id
        self.depth = depth
        self.after = after
        self.live = live
        self.transcript = Transcript(run_id)
        self.started = False
        self._held: Call | None = None
        """A finished call, printed once its ``file.changed`` events are in."""
        self._asked: set[str] = set()
        """Calls shown as a question already (their block does not say why again)."""
        self.turn_ends: set[int] | None = None
        """Replaying: the turns that end in what is replayed (their world is known)."""
        self._streamed: StreamedText | None = None
        """The reply whose words are being printed as they arrive (``stream``)."""
        self._asking: int | None = None
        """The turn whose ``model.requested`` was shown last, until its reply is."""
        self._early: list[ModelDelta] = []
        """Pieces that came before the view showed their call (printed once it has)."""

    @property
    def console(self) -> Console:
        """The console printed on."""
        return self.screen.console

    def print(self, renderable: RenderableType) -> None:
        """Print a block of this run (nested under its parents' bars)."""
        self.screen.print(renderable, self.depth)

    async def add(self, event: RunEvent) -> list[Call | Shown]:
        """Fold and show one event; the calls (and cards) waiting for an answer from here now."""
        block = self.transcript.add(event)
        if self._held is not None and not _belongs(event, self._held):
            await self._flush()
        if event.seq < self.after:
            return []
        if event.seq == self.after:  # caught up: a question asked before is asked again
            pending = self.transcript.pending()
            if pending:
                self._start()
            for call in pending:
                self._asked.add(call.call_id)
                self.print(question(call))
            cards = self.transcript.waiting_cards()
            for card in cards:
                self._start()
                self.print(shown_block(card))
                self.print(choice_wait(card, self.run_id))
            return [*pending, *cards]
        self._start()
        return await self._show(event, block)

    def _start(self) -> None:
        """The header, once: drawn at the first event shown, so a fork's is its own.

        (A fork is shown from its fork point; its ``run.forked``, which names its own
        world and model, comes right after and is folded before the header is drawn.)
        """
        if self.started:
            return
        self.started = True
        if self.depth == 0:
            self.print(header(self.transcript, hint=self.screen.leave_hint if self.live else None))

    async def close(self) -> None:
        """Print what is still held (the stream ended)."""
        if self._held is not None:
            await self._flush()
        self.screen.idle()

    def stream(self, delta: ModelDelta) -> None:
        """Print a piece of a reply's text as it arrives (once the view has begun)."""
        from helix.providers import TextDelta
        from helix.runtime import ReplyRestart

        from ._streamed import StreamedText

        piece = delta.delta
        if isinstance(piece, ReplyRestart):  # what was shown is void: the reply comes whole
            self._early = [d for d in self._early if d.turn != delta.turn]
            if self._streamed is not None and self._streamed.turn == delta.turn:
                self._streamed.stop()
                self._streamed = None
            return
        if not isinstance(piece, TextDelta) or not piece.text:
            return
        if self._asking != delta.turn:  # what comes before it is not all on the screen yet
            self._early.append(delta)
            return
        streamed = self._streamed
        if streamed is None or streamed.turn != delta.turn:
            if streamed is not None:
                streamed.stop()
            self.screen.idle()
            self.print(Text(""))
            streamed = self._streamed = StreamedText(self.console, self.depth, delta.turn)
        streamed.add(piece.text)

    def _streamed_whole(self, event: RunEvent) -> bool:
        """End the reply being streamed; whether ``event`` (its ``model.responded``) is shown."""
        if event.type == "model.responded":
            self._asking, self._early = None, []
        streamed, self._streamed = self._streamed, None
        if streamed is None:
            return False
        if event.type != "model.responded" or event.turn != streamed.turn:
            streamed.stop()
            return False
        return streamed.finish(str(event.data.get("text") or ""))

    # -- what each event shows ------------------------------------------------------------

    async def _show(self, event: RunEvent, block: Block | None) -> list[Call | Shown]:
        kind = event.type
        transcript = self.transcript
        if kind != "model.requested" and self._streamed_whole(event):
            return []  # the reply's words are on the screen already
        if kind == "model.requested":
            self._spin(f"thinking (turn {transcript.turn})")
            early = [d for d in self._early if d.turn == event.turn]
            self._asking, self._early = event.turn, []
            for delta in early:
                self.stream(delta)
        elif kind == "tool.started" and isinstance(block, Call):
            self._spin(f"running {block.name}")
        elif kind in ("tool.completed", "tool.interrupted") and isinstance(block, Call):
            self._held = block
        elif kind == "approval.requested" and isinstance(block, Call):
            if not self.live or (transcript.auto_approve and not _wants_fields(block)):
                return []
            self.screen.idle()
            self._asked.add(block.call_id)
            self.print(question(block))
            return [block]
        elif isinstance(block, Shown):
            self._show_component(kind, block)
            return [block] if kind == "ui.asked" and self.live else []
        elif isinstance(block, Said):
            self.screen.idle()
            if block.who == "agent":
                self.print(Text(""))
            self.print(said(block))
        elif isinstance(block, Note) and kind != "run.created":
            self._show_note(kind, block)
        return []

    def _show_note(self, kind: str, block: Note) -> None:
        if kind in ("run.completed", "run.failed", "run.cancelled", "run.paused"):
            self.screen.idle()
        if kind == "run.paused" and self.depth == 0 and self.live and self.waits:
            self._spin(f"paused: helix resume in another terminal, or {self.screen.leave_hint}")
        if not (kind == "run.completed" and repeats(self.transcript, block)):
            self.print(note(block))

    def _show_component(self, kind: str, block: Shown) -> None:
        """A component when shown; an options card's wait and its choice as they come."""
        self.screen.idle()
        if kind == "ui.component":
            self.print(shown_block(block))
        elif kind == "ui.asked":
            self.print(choice_wait(block, self.run_id))
        elif kind == "ui.chosen":
            self.print(choice_made(block))

    def _spin(self, label: str) -> None:
        if self.live and self._streamed is None:  # not over words being printed
            self.screen.spin(label, self.transcript.cost_usd)

    async def _flush(self) -> None:
        call, self._held = self._held, None
        if call is None:
            return
        diffs = {change.path: await self._diff(call, change.path) for change in call.files}
        self.print(call_block(call, diffs, why=call.call_id not in self._asked))

    async def _diff(self, call: Call, path: str) -> str:
        """The file's diff over the call's turn: to now while live, to the turn's end after."""
        turn = call.turn
        if turn is None or turn < 1:
            return ""
        end: Point
        if self.live:
            end = "now"
        elif turn in (self.turn_ends or ()):
            end = turn
        else:
            return ""
        run_id = call.run_id or self.run_id  # a fork's first calls are its parent's
        try:
            return await self.api.diff(run_id, start=turn - 1, end=end, path=path)
        except HelixError:  # the world is gone, or the point was never reached
            return ""


def _wants_fields(call: Call) -> bool:
    """Whether the call waits on a source's question with fields (auto-approve gives none)."""
    schema = (call.question or {}).get("schema") or {}
    return bool(schema.get("properties"))


def _belongs(event: RunEvent, call: Call) -> bool:
    return event.type == "file.changed" and event.data.get("call_id") == call.call_id


async def show_replay(api: HelixApi, run_id: str, *, to: int | None, console: Console) -> None:
    """The session as it was logged (up to seq ``to``), drawn as it was shown live."""
    screen = Screen(console, live=False)
    view = RunView(screen, api, run_id, live=False)
    events = [e async for e in api.events(run_id) if to is None or e.seq <= to]
    view.turn_ends = {int(e.data["turn"]) for e in events if e.type == "turn.ended"}
    for event in events:
        await view.add(event)
    await view.close()
    at = None if to is None or not events or events[-1].seq < to else to
    screen.print(summary(view.transcript, None, at=at))
