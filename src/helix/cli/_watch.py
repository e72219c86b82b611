"""Watching a run from a terminal: shown as it goes, its questions asked.

``Watch`` shows the run (and a child's, nested under ``│`` bars after its
``agent.spawned``) while this process drives it, or while a server or another process
does; its questions are asked here, one at a time, and a question answered elsewhere
meanwhile is dropped. Leaving early (Ctrl-C, or the input ending) is ``_leave``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TextIO

from helix.errors import HelixError, NotFoundError

from ._follow import CHILD_WAIT_TRIES, stops_following
from ._prompt import NoAnswer

if TYPE_CHECKING:
    from rich.console import Console

    from helix.api import HelixApi, RunEvent
    from helix.kernel.session import SessionState
    from helix.runtime import DeltaSink, ModelDelta

    from ._prompt import Reply
    from ._screen import Screen
    from ._transcript import Call, Shown
    from ._view import RunView

    Asked = Call | Shown
    """What waits on a person here: a call's approval, or an options card's choice."""


class Watch:
    """One run shown on this terminal until it ends or the person leaves."""

    def __init__(
        self,
        api: HelixApi,
        run_id: str,
        *,
        json: bool,
        after: int,
        ask: bool,
        console: Console | None = None,
        stdin: TextIO | None = None,
        wait: bool = False,
    ) -> None:
        self.api = api
        self.wait = wait
        """At the run's pause, wait for a resume from elsewhere (else stop there: exit 5)."""
        self.stdin = stdin
        """Where answers are read (default: this process's stdin)."""
        self.run_id = run_id
        self.json = json
        self.after = after
        self.ask = ask
        self._console = console
        self._screen: Screen | None = None
        self.views: list[RunView] = []
        """The runs being shown: the run, then the child it waits on, and so on."""
        self.top: RunView | None = None
        self.leaving = False
        self.driven_here = False
        """Whether this process drives the run (a Ctrl-C then pauses it)."""

    @property
    def screen(self) -> Screen:
        """The console and spinner (made when first needed: Rich loads only then)."""
        if self._screen is None:
            from rich.console import Console

            from ._screen import Screen

            console = self._console or Console(highlight=False)
            self._screen = Screen(console, live=True)
            if self.driven_here:
                self._screen.leave_hint = "Ctrl-C to pause"
        return self._screen

    def until(self, state: SessionState) -> bool:
        """For the drive here: stop at a pause, unless asked to wait (and the person stays)."""
        return state.status == "paused" and (self.leaving or not self.wait)

    def deltas(self) -> DeltaSink | None:
        """Where the replies of runs driven here stream: their views, on a terminal only.

        ``None`` (no streaming) with ``--json`` (events only) or captured output.
        """
        if self.json:
            return None
        if self._console is None:  # as the screen's will (made later: it is told who drives)
            from rich.console import Console

            self._console = Console(highlight=False)
        return _Views(self) if self._console.is_terminal else None

    # -- showing ----------------------------------------------------------------------------

    async def follow(self) -> str | None:
        """Show the run until it ends (or pauses, unless ``wait``); the type of its last event.

        ``None``: cut off. At a pause, why and how to resume it are said (stderr with JSON).
        """
        final = await self._show(self.run_id, self.after, 0)
        then = None
        if final == "run.paused":
            from ._paused import pause_lines

            then = await pause_lines(self.api, self.run_id)
            if self.json:
                for line in then:
                    print(line, file=sys.stderr)
        if final is not None and not self.json and self.top is not None:
            await self._summary(then)
        return final

    async def _show(self, run_id: str, after: int, depth: int) -> str | None:
        events = self.api.events(run_id, after=after if self.json else -1, follow=True)
        async with contextlib.aclosing(events):
            if self.json:
                return await self._json(events, run_id, depth)
            from ._view import RunView

            view = RunView(self.screen, self.api, run_id, depth=depth, after=after, waits=self.wait)
            self.views.append(view)
            self.top = self.top or view
            try:
                final = await self._pictured(events, view)
            finally:
                await view.close()
            self.views.remove(view)  # left in place when cut off: leaving pauses it
            return final

    async def _json(self, events: Any, run_id: str, depth: int) -> str | None:
        async for event in events:
            sys.stdout.write(event.to_kernel().to_json() + "\n")
            sys.stdout.flush()
            if self.ask and event.type == "approval.requested":
                await self._decide_plainly(run_id, event)
            if stops_following(event, depth, at_pause=not self.wait):
                return str(event.type)
        return None

    async def _pictured(self, events: Any, view: RunView) -> str | None:
        queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()
        try:
            async with asyncio.TaskGroup() as group:
                pump = group.create_task(_pump(events, queue))
                try:
                    return await self._each(group, queue, view)
                finally:
                    pump.cancel()
        except BaseExceptionGroup as failed:  # the reason, not "a group"
            raise failed.exceptions[0] from None

    async def _each(
        self, group: asyncio.TaskGroup, queue: asyncio.Queue[RunEvent | None], view: RunView
    ) -> str | None:
        """Show each event as it comes, asking (one question at a time) meanwhile."""
        asking: tuple[Asked, asyncio.Task[Reply | str | None]] | None = None
        waiting: list[Asked] = []
        try:
            while True:
                getter = group.create_task(queue.get())
                racing: set[asyncio.Future[Any]] = {getter}
                if asking is not None:
                    racing.add(asking[1])
                done, _ = await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
                if asking is not None and asking[1] in done:
                    await self._answered(view, *asking)
                    asking = None
                if getter not in done:
                    getter.cancel()
                else:
                    event = getter.result()
                    if event is None:
                        return None
                    waiting += self._to_ask(view, await view.add(event))
                    if asking is not None and not _waits(asking[0]):
                        asking[1].cancel()  # answered elsewhere meanwhile
                        view.print(_elsewhere(asking[0]))
                        asking = None
                    if event.type == "agent.spawned":
                        await self._child(str(event.data["child_run_id"]), view.depth + 1)
                    at_pause = not self.wait and event.seq > view.after  # not the one resumed
                    if stops_following(event, view.depth, at_pause=at_pause):
                        return str(event.type)
                waiting = [c for c in waiting if _waits(c)]
                if asking is None and waiting and queue.empty():  # nothing more to print first
                    asking = self._question(group, view, waiting.pop(0))
        finally:
            if asking is not None:
                asking[1].cancel()

    def _to_ask(self, view: RunView, waiting: list[Asked]) -> list[Asked]:
        """What to ask about here; for the others, how to answer them elsewhere."""
        from ._transcript import Call

        if self.ask:
            return waiting
        for call in waiting:
            if isinstance(call, Call):  # a card says how to choose itself
                view.print(_hint_to_decide(view.run_id, call))
        return []

    def _question(
        self, group: asyncio.TaskGroup, view: RunView, waiting: Asked
    ) -> tuple[Asked, asyncio.Task[Reply | str | None]]:
        from ._prompt import ask_option, reply_to
        from ._transcript import Shown

        async def asked() -> Reply | str | None:
            with self.screen.still():
                if isinstance(waiting, Shown):
                    ids = [str(o.get("id")) for o in waiting.props.get("choices") or []]
                    return await ask_option(self.screen.console, ids, self.stdin)
                return await reply_to(self.screen.console, waiting.question, self.stdin)

        return waiting, group.create_task(asked())

    async def _answered(
        self, view: RunView, waiting: Asked, task: asyncio.Task[Reply | str | None]
    ) -> None:
        from ._transcript import Shown

        reply = task.result()
        if reply is None:
            raise NoAnswer(view.run_id)
        try:
            if isinstance(waiting, Shown):  # an options card: the option's id
                assert isinstance(reply, str)
                await self.api.choose(view.run_id, waiting.component_id, reply)
            else:
                assert not isinstance(reply, str)
                answer, content = reply
                await self.api.decide(view.run_id, waiting.request_id, answer, answer=content)
        except HelixError as error:  # decided elsewhere meanwhile, or expired
            view.print(_plain(f"  not recorded: {error}", "yellow"))

    async def _decide_plainly(self, run_id: str, event: RunEvent) -> None:
        """JSON output with a person at the keyboard: the question on stderr."""
        from rich.console import Console

        from ._blocks import source_question
        from ._prompt import reply_to
        from ._transcript import printable

        console = Console(stderr=True, highlight=False)
        data = event.data
        asked = data.get("question")
        question = None if asked is None else {**asked, "name": data["name"], "args": data["args"]}
        if question is None:
            console.print(printable(f"{data['name']} {data['args']}"), markup=False)
        else:
            console.print(*source_question(question), sep="\n")
        reply = await reply_to(console, question, self.stdin)
        if reply is None:
            raise NoAnswer(run_id)
        with contextlib.suppress(HelixError):
            await self.api.decide(run_id, str(data["request_id"]), reply[0], answer=reply[1])

    async def _child(self, child_id: str, depth: int) -> None:
        # The parent logs the child's id just before creating it.
        for _ in range(CHILD_WAIT_TRIES):
            try:
                await self.api.get(child_id)
                break
            except NotFoundError:
                await asyncio.sleep(0.05)
        else:
            return  # never created (the parent's process died): nothing to show
        await self._show(child_id, 0, depth)

    async def _summary(self, then: list[str] | None) -> None:
        from ._blocks import summary

        assert self.top is not None
        try:
            record = await self.api.get(self.run_id)
        except HelixError:
            record = None
        self.screen.print(summary(self.top.transcript, record, then=then))

    # -- driving, and leaving ---------------------------------------------------------------

    async def run(self, driving: Coroutine[Any, Any, object] | None) -> int:
        """Show the run while ``driving`` (or another driver) drives it; the exit code.

        0 when it completed; 1 when it failed or was cancelled, or a question went
        unanswered; 5 when it paused (unless ``wait``); 130 when the person left with Ctrl-C.
        """
        from ._leave import watch_driving

        return await watch_driving(self, driving)

    def say(self, line: str) -> None:
        """Tell the person something about leaving (stderr with JSON output)."""
        if self.json:
            print(line, file=sys.stderr)
        else:
            self.screen.idle()
            self.screen.print(_plain(line, "yellow"))


async def _pump(events: Any, queue: asyncio.Queue[RunEvent | None]) -> None:
    try:
        async for event in events:
            await queue.put(event)
    finally:
        queue.put_nowait(None)


def _plain(text: str, style: str) -> Any:
    from rich.text import Text

    from ._transcript import printable

    return Text(printable(text), style=style)


def _waits(waiting: Asked) -> bool:
    """Whether the call still waits for a decision, or the card for a choice."""
    from ._transcript import Shown

    return waiting.waiting if isinstance(waiting, Shown) else waiting.state == "waiting"


def _elsewhere(waiting: Asked) -> Any:
    from ._transcript import Shown

    if isinstance(waiting, Shown):
        return _plain("  answered elsewhere", "yellow")  # the choice's own line follows
    verb = {"allow": "allowed", "deny": "denied"}.get(waiting.decision or "", "answered")
    by = f" by {waiting.decided_by}" if waiting.decided_by else ""
    return _plain(f"  {verb}{by} elsewhere", "yellow")


def _hint_to_decide(run_id: str, call: Call) -> Any:
    return _plain(
        f"  waiting for a decision: helix approve {run_id} {call.request_id}"
        f" · helix deny {run_id} {call.request_id}",
        "yellow",
    )


class _Views:
    """The views of a ``Watch`` as a delta sink: each run shown here streams to its view."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch

    def watching(self, run_id: str) -> bool:
        return any(view.run_id == run_id for view in self.watch.views)

    async def __call__(self, delta: ModelDelta) -> None:
        for view in self.watch.views:
            if view.run_id == delta.run_id:
                view.stream(delta)
