"""One run: its conversation and tool blocks, a pending approval or choice, steering, control."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from helix.cli._transcript import Block, Call, Note, Shown, Transcript
from helix.errors import HelixError, NotAGraphError

from ._render import approval_text, choice_text, head_text, turn_rule
from ._typing import Typing
from ._widgets import BlockView, Keys

if TYPE_CHECKING:
    from helix.api import Approval, Decision, Point, Run, RunEvent

    from ._app import HelixTui

REFRESH_ON = ("run.", "turn.", "approval.", "model.responded", "steer.", "world.rolled_back")
"""Events after which the header (status, turns, spend) is read again."""
GRAPH_ON = ("graph.", "task.", "approval.", "run.")
"""Events after which a task graph's tasks are read again."""
PROCESSES_ON = ("world.process_", "world.checkpointed", "world.restored", "world.stopped", "run.")
"""Events after which a live world's background processes are read again."""


class RunScreen(Screen[None]):
    """A run as it happens (or happened): followed through the door until it ends."""

    BINDINGS = [
        Binding("question_mark", "app.keys", "keys"),
        Binding("escape", "back", "back", show=False),
        Binding("a", "decide('allow')", "allow"),
        Binding("d", "decide('deny')", "deny"),
        Binding("s", "steer", "steer"),
        Binding("p", "pause", "pause"),
        Binding("r", "resume", "resume"),
        Binding("c", "cancel", "cancel"),
        Binding("w", "world", "files"),
        Binding("f", "fork", "fork"),
        Binding("b", "rollback", "rollback"),
        *(Binding(str(n), f"choose({n})", "choose", show=False) for n in range(1, 10)),
    ]

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.run: Run | None = None
        self.transcript = Transcript(run_id)
        self.seen = -1
        """The seq of the last event shown (its block drawn, the header and panel read)."""
        self.asking: list[Approval] = []
        """The run's pending approvals, as of the last event that could change them."""
        self.views: dict[int, BlockView] = {}
        """The view of each block shown, by the block's ``id()``."""
        self.shown_turn = 0
        """The last turn whose rule is shown."""
        self.is_graph: bool | None = None
        """Whether the run is a task graph (its tasks shown under the header); ``None``:
        not known yet."""
        self.typing = Typing()
        """The reply being written, as it streams."""

    @property
    def ended(self) -> bool:
        """Whether the run has ended and every one of its events is shown."""
        return self.run is not None and self.run.finished and self.seen >= self.run.head

    @property
    def tui(self) -> HelixTui:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        """Header, conversation, approval panel, steer input, keys."""
        yield Header()
        yield Static("", id="head")
        yield Static("", id="graph")
        yield Static("", id="processes")
        yield VerticalScroll(id="conversation")
        yield Static("", id="activity")
        yield Static("", id="approval")
        yield Input(placeholder="steer: tell the agent something, Enter sends", id="steer")
        yield Keys()

    def on_mount(self) -> None:
        """Read the run, then follow its events."""
        self.query_one("#conversation").focus()
        self.follow()

    def follow(self) -> None:
        """Follow the run's events from the last one shown (again, after a resume).

        And its replies as they are written (``HelixApi.replies``).
        """
        self.run_worker(self._follow(), group="follow", exclusive=True, exit_on_error=False)
        self.run_worker(self._replies(), group="replies", exclusive=True, exit_on_error=False)

    async def _replies(self) -> None:
        with contextlib.suppress(HelixError):  # nothing streams: the events still come
            async for piece in self.tui.api.replies(self.run_id):
                if self.typing.take(piece):
                    self._activity()

    def _activity(self) -> None:
        """Under the conversation: the reply being written, else that the model thinks."""
        activity = self.query_one("#activity", Static)
        activity.display = self.typing.active or self.transcript.thinking
        if self.typing.active:
            activity.update(self.typing.render(self.size.width))
        elif self.transcript.thinking:
            activity.update(Text("… the model is thinking", style="dim italic"))

    async def _follow(self) -> None:
        await self.refresh_head()
        await self.refresh_processes()
        try:
            async for event in self.tui.api.events(self.run_id, after=self.seen, follow=True):
                await self.take(event)
        except HelixError as error:
            self.tui.fail(f"following {self.run_id}: {error}")
        await self.refresh_head()

    async def take(self, event: RunEvent) -> None:
        """Show one event: a new block is added, a changed one redrawn."""
        block = self.transcript.add(event)
        box = self.query_one("#conversation", VerticalScroll)
        at_end = box.scroll_offset.y >= box.max_scroll_y - 1
        if block is not None and not (isinstance(block, Note) and block.kind == "created"):
            view = self.views.get(id(block))
            if view is None:
                await self._mount(box, block)
            else:
                view.redraw()
        self.typing.ended(event)
        self._activity()
        if event.type == "turn.ended" and event.turn is not None:
            await self._diffs(event.turn)
        if event.type.startswith(REFRESH_ON):
            await self.refresh_head()
        if event.type.startswith(GRAPH_ON) and self.is_graph is not False:
            await self.refresh_graph()
        if event.type.startswith(PROCESSES_ON):
            await self.refresh_processes()
        if event.type.startswith(("approval.", "run.")):
            await self.refresh_approvals()
        elif self.asking or event.type.startswith("ui."):
            self.show_approval()
        if at_end:  # once the layout has taken the new block (and panel) in
            self.call_after_refresh(box.scroll_end, animate=False)
        self.seen = event.seq

    async def _mount(self, box: VerticalScroll, block: Block) -> None:
        if block.turn is not None and block.turn > self.shown_turn:
            self.shown_turn = block.turn
            await box.mount(Static(turn_rule(block.turn), classes="block rule"))
        view = BlockView(block, self.transcript)
        self.views[id(block)] = view
        await box.mount(view)

    async def _diffs(self, turn: int) -> None:
        """Fetch the diff of each file a call of the turn edited, to show under the call."""
        start: Point = "start" if turn <= 1 else turn - 1
        for view in self.views.values():
            call = view.block
            if not isinstance(call, Call) or call.turn != turn or not call.files or view.diffs:
                continue
            for path in dict.fromkeys(change.path for change in call.files):
                with contextlib.suppress(HelixError):
                    view.diffs[path] = await self.tui.api.diff(
                        self.run_id, start=start, end=turn, path=path
                    )
            view.redraw()

    async def refresh_head(self) -> None:
        """Read the run again and show its header."""
        run = await self.tui.attempt(self.tui.api.get(self.run_id), "reading the run")
        if run is None:
            return
        self.run = run
        self.query_one("#head", Static).update(
            head_text(run, driven_here=self.tui.driven_here(run.id))
        )

    async def refresh_processes(self) -> None:
        """A live run's background processes under the header (none shown: no panel)."""
        from helix.cli._render import process_lines

        live = await self.tui.attempt(self.tui.api.processes(self.run_id), "reading processes")
        panel = self.query_one("#processes", Static)
        shown = live is not None and bool(live.processes or live.image)
        panel.display = shown
        if live is not None and shown:
            panel.update(Text("\n".join(process_lines(live))))

    async def refresh_graph(self) -> None:
        """A task graph's tasks, read again (a run that is no graph shows none)."""
        from helix.cli._graph_lines import graph_table

        panel = self.query_one("#graph", Static)
        try:
            graph = await self.tui.api.graph(self.run_id)
        except NotAGraphError:
            self.is_graph = False
            return
        except HelixError:
            return  # said by the next read, if it lasts
        self.is_graph = True
        panel.update(Text("\n".join(graph_table(graph, columns=self.size.width - 2, head=False))))
        panel.add_class("graph")

    async def refresh_approvals(self) -> None:
        """Read the pending approvals; show the first one with why it asks."""
        asked = await self.tui.attempt(self.tui.api.approvals(self.run_id), "reading approvals")
        self.asking = asked or []
        self.show_approval()

    @property
    def card(self) -> Shown | None:
        """The first options card waiting for a choice (none once the run has ended)."""
        cards = self.transcript.waiting_cards()
        return cards[0] if cards and not (self.run is not None and self.run.finished) else None

    def show_approval(self) -> None:
        """Show the first pending approval (with why its gate asked), else a waiting card."""
        panel = self.query_one("#approval", Static)
        if not self.asking:
            card = self.card
            panel.set_class(card is not None, "asking")
            panel.update("" if card is None else choice_text(card))
            return
        first = self.asking[0]
        call = self.transcript.call(first.call_id)
        panel.update(approval_text(first, call))
        panel.add_class("asking")

    async def action_decide(self, decision: Decision) -> None:
        """Allow or deny the pending approval shown."""
        if not self.asking:
            self.tui.notify("nothing is waiting for a decision")
            return
        request = self.asking[0]
        question = request.question
        if decision == "allow" and question is not None and question.fields.get("properties"):
            self._answer(request)
            return
        answer: dict[str, Any] | None = {} if decision == "allow" and question else None
        decided = await self.tui.attempt(
            self.tui.api.decide(self.run_id, request.request_id, decision, answer=answer), decision
        )
        if decided is not None:
            self.tui.notify(f"{decision}: {request.name}", markup=False)
        await self.refresh_approvals()

    async def action_choose(self, number: int) -> None:
        """Choose option ``number`` (from 1) of the waiting card (a key, or a click on it)."""
        card = self.card
        if card is None or card.component_id is None:
            self.tui.notify("nothing is waiting for a choice")
            return
        options = [o for o in card.props.get("choices") or [] if isinstance(o, dict)]
        if not 1 <= number <= len(options):
            self.tui.notify(f"the card has {len(options)} options")
            return
        option = str(options[number - 1].get("id"))
        made = await self.tui.attempt(
            self.tui.api.choose(self.run_id, card.component_id, option), "choose"
        )
        if made is not None:
            self.tui.notify(f"chose {card.label(option)}", markup=False)

    def _answer(self, request: Approval) -> None:
        """Answer a source's question with fields, in a dialog."""
        from ._dialogs import AnswerDialog

        async def answered(done: bool | None) -> None:
            if done:
                self.tui.notify("answered", markup=False)
            await self.refresh_approvals()

        self.app.push_screen(AnswerDialog(self.run_id, request), answered)

    def action_steer(self) -> None:
        """Type a message for the agent."""
        self.query_one("#steer", Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        """Send the steer message."""
        if event.input.id != "steer":
            return
        message = event.value.strip()
        if not message:
            return
        if not await self.tui.succeed(self.tui.api.steer(self.run_id, message), "steer"):
            return
        event.input.value = ""
        self.tui.notify("sent to the agent")
        self.query_one("#conversation").focus()

    def action_back(self) -> None:
        """Leave the steer input, or go back to the runs list."""
        steer = self.query_one("#steer", Input)
        if steer.has_focus:
            self.query_one("#conversation").focus()
        else:
            self.app.pop_screen()

    async def action_pause(self) -> None:
        """Pause at the next safe point."""
        if await self.tui.attempt(self.tui.api.pause(self.run_id), "pause") is not None:
            self.tui.notify("pausing")
        await self.refresh_head()

    async def action_resume(self) -> None:
        """Resume (driven here in embedded mode, by the server otherwise)."""
        if await self.tui.attempt(self.tui.api.resume(self.run_id), "resume") is not None:
            self.tui.notify("resumed")
            self.follow()

    def action_cancel(self) -> None:
        """Cancel, once confirmed."""
        from ._dialogs import ConfirmDialog

        async def confirmed(yes: bool | None) -> None:
            if yes:
                await self.tui.attempt(self.tui.api.cancel(self.run_id), "cancel")
                await self.refresh_head()

        self.app.push_screen(ConfirmDialog(f"Cancel run {self.run_id}?"), confirmed)

    def action_world(self) -> None:
        """The world's files and diffs, at the run's last turn."""
        from ._files_screen import FilesScreen

        self.app.push_screen(FilesScreen(self.run_id, None if self.run is None else self.run.turns))

    def action_fork(self) -> None:
        """Fork at a turn with a message (asked in a dialog); open the fork."""
        from ._dialogs import ForkDialog

        def forked(run_id: str | None) -> None:
            if run_id is not None:
                self.app.push_screen(RunScreen(run_id))

        turns = 0 if self.run is None else self.run.turns
        self.app.push_screen(ForkDialog(self.run_id, turns), forked)

    def action_rollback(self) -> None:
        """Roll the world back to a turn (asked and confirmed in a dialog)."""
        from ._dialogs import RollbackDialog

        def rolled(done: bool | None) -> None:
            if done:
                self.follow()

        self.app.push_screen(RollbackDialog(self.run_id), rolled)
