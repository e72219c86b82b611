"""Live streams over WebSocket: one run's log from a seq on, or every visible run's.

A client that cannot keep up is dropped with close code 4008 and a reason naming the
seq to reconnect after; its queue is bounded, so it never slows the run or the server.
Clients may send ``steer``, ``approval`` and ``choice`` messages on the same socket;
they are carried out by ``LocalApi`` (``_api.py``), as ``POST …/steer``,
``…/approvals/{id}`` and ``…/components/{id}/choose`` are.

With ``replies=true``, a run's stream also carries the pieces of its model replies as
they arrive (``reply.text``, ``reply.tool_call``, ``reply.restart``: no ``seq``, never
replayed; ``helix.runtime.piece_message``): while a socket asks for them the run's
model calls stream (each call that starts from then on).

Close codes: 4401 no or bad token, 4404 no such run (or not visible), 4008 too slow
(or, on the every-run stream, events were missed: the store's feed of other processes'
appends was interrupted; a run's stream reads those from the log instead).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Coroutine
from typing import Any, cast

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from helix.api import Decision
from helix.errors import (
    AmbiguousRunError,
    HelixError,
    NotFoundError,
    SubscriptionGapError,
    SubscriptionOverflowError,
)
from helix.runtime import Watcher, piece_message

from ._api import local_api
from ._auth import Caller, identify
from ._errors import CLOSE_BAD_REQUEST, ApiError, close_reason, status_of
from ._state import ServerState

router = APIRouter()

CLOSE_UNAUTHORIZED = 4401
CLOSE_NOT_FOUND = 4404
CLOSE_TOO_SLOW = 4008
_MAX_MESSAGE = 100_000


_LEFT = (WebSocketDisconnect, RuntimeError, OSError)
"""What sending to a client that has gone raises (closed, or its connection dropped)."""


class _ClientGone(Exception):
    """The client left: an end of the stream like any other, not an error."""


class _Socket:
    """A WebSocket whose sends are serialised and bounded in time."""

    def __init__(self, websocket: WebSocket, timeout_s: float) -> None:
        self.websocket = websocket
        self.timeout_s = timeout_s
        self._lock = asyncio.Lock()

    async def send(self, text: str) -> None:
        """Send one message; ``TimeoutError`` if it takes too long, ``_ClientGone`` if it left."""
        async with self._lock:
            try:
                await asyncio.wait_for(self.websocket.send_text(text), self.timeout_s)
            except _LEFT as error:
                raise _ClientGone from error

    async def close(self, code: int, reason: str) -> None:
        with contextlib.suppress(Exception):  # the peer may be gone already
            await asyncio.wait_for(self.websocket.close(code, reason), 1.0)


async def _open(websocket: WebSocket, token: str | None) -> tuple[ServerState, Caller] | None:
    state: ServerState = websocket.app.state.helix
    try:
        await websocket.accept()
    except _LEFT:
        return None  # it left before it was let in
    try:
        caller = await identify(token, state.signer, state.accounts, ("ws",), api_tokens=False)
    except ApiError as error:
        await _Socket(websocket, 1.0).close(CLOSE_UNAUTHORIZED, close_reason(error.message))
        return None
    return state, caller


@router.websocket("/runs/{run_id}/stream")
async def run_stream(
    websocket: WebSocket,
    run_id: str,
    token: str | None = None,
    after: int = -1,
    replies: bool = False,
) -> None:
    """Every event of the run with seq > ``after``, then live ones, in order.

    ``replies``: the pieces of its replies too, as they stream (not events: no seq).
    """
    opened = await _open(websocket, token)
    if opened is None:
        return
    state, caller = opened
    socket = _Socket(websocket, state.config.ws_send_timeout_s)
    try:
        run_id = (await caller.run(state.store, run_id)).id
    except NotFoundError:
        await socket.close(CLOSE_NOT_FOUND, close_reason(f"run {run_id!r} not found"))
        return
    except AmbiguousRunError as error:
        await socket.close(CLOSE_BAD_REQUEST, close_reason(str(error)))
        return
    last = max(after, -1)

    async def send_events(pieces: _Pieces | None = None) -> None:
        nonlocal last
        subscription = state.store.subscribe(
            run_id, after=last, max_queue=state.config.ws_queue, resume_on_overflow=False
        )
        try:
            async with subscription:
                async for event in subscription:
                    if pieces is None:
                        await socket.send(event.to_json())
                    else:
                        await pieces.send_then(event.to_json())
                    last = event.seq
        except (SubscriptionOverflowError, TimeoutError):
            await socket.close(CLOSE_TOO_SLOW, f"too slow: reconnect with after={last}")
        except _ClientGone:
            return

    async def send_all() -> None:
        if not replies:
            await send_events()
            return
        with state.replies.watch(run_id) as watcher:
            pieces = _Pieces(socket, watcher)
            async with asyncio.TaskGroup() as group:
                events = group.create_task(send_events(pieces))
                live = group.create_task(pieces.send_live())
                await asyncio.wait({events, live}, return_when="FIRST_COMPLETED")
                events.cancel()
                live.cancel()

    await _serve(socket, state, caller, send_all, default_run=run_id)


class _Pieces:
    """A socket's reply pieces, each sent before the event logged after it."""

    def __init__(self, socket: _Socket, watcher: Watcher) -> None:
        self.socket = socket
        self.watcher = watcher
        self._order = asyncio.Lock()
        """Held while pieces are taken and sent: an event waits for those taken."""

    async def _flush(self) -> None:
        for piece in self.watcher.take():
            await self.socket.send(json.dumps(piece_message(piece)))

    async def send_then(self, event: str) -> None:
        """Send the pieces queued now, then ``event``."""
        async with self._order:
            await self._flush()
            await self.socket.send(event)

    async def send_live(self) -> None:
        """Send pieces as they come, until the client leaves."""
        try:
            while True:
                await self.watcher.wait()
                async with self._order:
                    await self._flush()
        except (TimeoutError, _ClientGone):
            return


@router.websocket("/stream")
async def all_stream(websocket: WebSocket, token: str | None = None) -> None:
    """Live events of every run the caller may see, from now on."""
    opened = await _open(websocket, token)
    if opened is None:
        return
    state, caller = opened
    socket = _Socket(websocket, state.config.ws_send_timeout_s)
    workspaces: dict[str, str | None] = {}

    async def visible(run_id: str) -> bool:
        if run_id not in workspaces:
            try:
                workspaces[run_id] = (await state.store.get_run(run_id)).workspace
            except NotFoundError:
                workspaces[run_id] = None
        return workspaces[run_id] in caller.roles

    async def send_events() -> None:
        try:
            async with state.store.subscribe_all(max_queue=state.config.ws_queue) as events:
                async for event in events:
                    if await visible(event.run_id):
                        await socket.send(event.to_json())
        except SubscriptionGapError:
            await socket.close(CLOSE_TOO_SLOW, "events missed: reconnect and read missed events")
        except (SubscriptionOverflowError, TimeoutError):
            await socket.close(CLOSE_TOO_SLOW, "too slow: reconnect and read missed events")
        except _ClientGone:
            return

    await _serve(socket, state, caller, send_events, default_run=None)


async def _serve(
    socket: _Socket,
    state: ServerState,
    caller: Caller,
    send_events: Callable[[], Coroutine[Any, Any, None]],
    *,
    default_run: str | None,
) -> None:
    """Send events and answer the client's messages until either side stops."""
    state.metrics.ws_clients.inc()
    try:
        async with asyncio.TaskGroup() as group:
            sender = group.create_task(send_events())
            receiver = group.create_task(_receive(socket, state, caller, default_run))
            await asyncio.wait({sender, receiver}, return_when="FIRST_COMPLETED")
            for task in (sender, receiver):
                task.cancel()
    finally:
        state.metrics.ws_clients.dec()


async def _receive(
    socket: _Socket, state: ServerState, caller: Caller, default_run: str | None
) -> None:
    while True:
        try:
            text = await socket.websocket.receive_text()
        except (*_LEFT, KeyError):
            return  # the client left (or sent something that is not text)
        reply = await _answer(text, state, caller, default_run)
        try:
            await socket.send(json.dumps(reply))
        except (TimeoutError, _ClientGone):
            return


async def _answer(
    text: str, state: ServerState, caller: Caller, default_run: str | None
) -> dict[str, Any]:
    """Carry out one message (``steer``, ``approval``, ``choice``): an ``ack`` or an ``error``."""
    if len(text) > _MAX_MESSAGE:
        return _error(None, 413, "payload_too_large", f"messages are at most {_MAX_MESSAGE} bytes")
    try:
        message = json.loads(text)
    except ValueError:
        return _error(None, 400, "bad_request", "messages are JSON objects")
    if not isinstance(message, dict):
        return _error(None, 400, "bad_request", "messages are JSON objects")
    ref = message.get("id")
    run_id = message.get("run_id", default_run)
    kind = message.get("type")
    if not isinstance(run_id, str):
        return _error(ref, 422, "invalid_request", "run_id is required on this stream")
    try:
        if kind == "steer":
            return await _steer(message, run_id, state, caller)
        if kind == "approval":
            return await _approve(message, run_id, state, caller)
        if kind == "choice":
            return await _choose(message, run_id, state, caller)
    except ApiError as error:
        return _error(ref, error.status, error.code, error.message)
    except HelixError as error:
        return _error(ref, status_of(error), error.code, str(error))
    return _error(ref, 422, "invalid_request", "type must be steer, approval or choice")


async def _steer(
    message: dict[str, Any], run_id: str, state: ServerState, caller: Caller
) -> dict[str, Any]:
    """A ``steer`` message: ``{message}``, as ``POST …/steer``."""
    ref = message.get("id")
    run_id = (await caller.run(state.store, run_id, act="steer runs")).id
    text_in = message.get("message")
    if not isinstance(text_in, str):
        return _error(ref, 422, "invalid_request", "message must be a string")
    await local_api(state, caller).steer(run_id, text_in)
    return {"type": "ack", "id": ref}


async def _approve(
    message: dict[str, Any], run_id: str, state: ServerState, caller: Caller
) -> dict[str, Any]:
    """An ``approval`` message: ``{decision, request_id?, reason?, answer?}``, as over REST."""
    ref = message.get("id")
    run_id = (await caller.run(state.store, run_id, act="approve or deny")).id
    decision, request = message.get("decision"), message.get("request_id")
    reason = message.get("reason")
    if not isinstance(decision, str) or not isinstance(request, str | None):
        return _error(ref, 422, "invalid_request", "decision (allow|deny) is required")
    reason = reason if isinstance(reason, str) else None
    answer = message.get("answer")
    if not isinstance(answer, dict | None):
        return _error(ref, 422, "invalid_request", "answer must be an object")
    api = local_api(state, caller)
    # Not narrowed here: the runtime refuses any other decision, as over REST.
    chosen = cast("Decision", decision)
    decided = await api.decide(run_id, request, chosen, reason=reason, answer=answer)
    return {"type": "ack", "id": ref, "request_id": decided.request_id}


async def _choose(
    message: dict[str, Any], run_id: str, state: ServerState, caller: Caller
) -> dict[str, Any]:
    """A ``choice`` message: ``{choice, component_id?}``, as ``POST …/components/{id}/choose``."""
    ref = message.get("id")
    run_id = (await caller.run(state.store, run_id, act="answer choices")).id
    choice, component = message.get("choice"), message.get("component_id")
    if not isinstance(choice, str) or not isinstance(component, str | None):
        return _error(ref, 422, "invalid_request", "choice (an option's id) is required")
    made = await local_api(state, caller).choose(run_id, component, choice)
    return {"type": "ack", "id": ref, "component_id": made.component_id}


def _error(ref: Any, status: int, code: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "id": ref,
        "status": status,
        "error": {"code": code, "message": message},
    }
