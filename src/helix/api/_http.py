"""``HttpApi``: the protocol against ``helix serve``, over HTTP (httpx) and WebSocket.

The server's error bodies become Helix's own exceptions (``_errors.py``), so a caller
handles ``RunNotFoundError`` or ``ApprovalClosedError`` the same way whichever door
it uses; a server that cannot be reached is a ``StoreUnavailableError``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING, Any

from helix.automations import Automation, AutomationCreated, AutomationList, AutomationSpec
from helix.errors import (
    ConfigError,
    NodeNotFoundError,
    StoreUnavailableError,
)
from helix.kernel.events import RunStatus

from ._blueprint_http import HttpBlueprints
from ._budgets import HttpBudgets
from ._choice_models import ChoiceCard, ChoiceCardList, Chosen
from ._errors import error_of
from ._http_graphs import HttpGraphs
from ._http_socket import run_messages
from ._live_models import ProcessList
from ._memory_http import HttpMemory
from ._models import (
    Approval,
    ApprovalList,
    Comparison,
    Decided,
    Decision,
    EventPage,
    FileEntry,
    FileList,
    Forked,
    Imported,
    Kept,
    Point,
    Rollback,
    Run,
    RunEvent,
    RunList,
    Spend,
    WorldList,
)
from ._node_models import Drained, NodeList
from ._paths import run_path as _at
from ._paths import segment as _segment
from ._replies_http import HttpReplies
from ._trace_models import Span
from ._workflow_http import HttpWorkflows
from ._worlds import is_world_name

if TYPE_CHECKING:
    import httpx

    from helix.runtime import Blueprint, CandidatePolicy, PolicyReplay

_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""What a node id can be (``local``, ``worker-2``, a Ray node's hex id)."""
_PAGE = 1000


class HttpApi(HttpWorkflows, HttpGraphs, HttpBudgets, HttpBlueprints, HttpMemory, HttpReplies):
    """A Helix server behind ``HelixApi``: ``url`` is its root, ``token`` a bearer token."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 30.0) -> None:
        import httpx

        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(
            base_url=f"{self.url}/api/v1", headers=headers, timeout=timeout
        )

    async def aclose(self) -> None:
        """Close the connections (the server keeps driving its runs)."""
        await self._http.aclose()

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        import httpx

        try:
            answer = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise StoreUnavailableError(f"cannot reach the server at {self.url}: {error}") from None
        if answer.status_code >= 400:
            raise error_of(answer.status_code, answer.content)
        return answer

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self._send(method, path, **kwargs)).json()

    # -- runs -------------------------------------------------------------------------

    async def create(
        self,
        objective: str,
        *,
        model: str | None = None,
        blueprint: Blueprint | dict[str, Any] | str | None = None,
        world: str | os.PathLike[str] | None = None,
        workspace: str | None = None,
        budget_usd: float | None = None,
        auto_approve: bool = False,
        attended: bool = True,
        budget_tokens: int | None = None,
    ) -> Run:
        """Start a run; the server drives it."""
        if world is not None and not is_world_name(world):
            raise ConfigError(
                f"world {os.fspath(world)!r}: with a server, name a folder of the workspace's"
                " worlds on the server (letters, digits, _ . -), not a local path"
            )
        if not isinstance(blueprint, str | dict | None):  # a Blueprint
            blueprint = blueprint.model_dump(mode="json", exclude_defaults=True)
        body: dict[str, Any] = {"objective": objective, "auto_approve": auto_approve}
        if not attended:  # sent only when set: a server from before it answers as it did
            body["attended"] = False
        for key, value in (("model", model), ("blueprint", blueprint), ("world", world),
                           ("workspace", workspace), ("budget_usd", budget_usd),
                           ("budget_tokens", budget_tokens)):  # fmt: skip
            if value is not None:
                body[key] = value
        created = await self._json("POST", "/runs", json=body)
        return await self.get(str(created["id"]))

    async def runs(
        self,
        *,
        status: RunStatus | None = None,
        workspace: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunList:
        """A page of runs the caller may see, newest first."""
        params: dict[str, Any] = {"limit": limit}
        for key, value in (("status", status), ("workspace", workspace), ("cursor", cursor)):
            if value is not None:
                params[key] = value
        return RunList.model_validate(await self._json("GET", "/runs", params=params))

    async def get(self, run_id: str) -> Run:
        """One run."""
        return Run.model_validate(await self._json("GET", _at(run_id)))

    async def events(
        self, run_id: str, *, after: int = -1, follow: bool = False
    ) -> AsyncGenerator[RunEvent, None]:
        """The run's events after ``after`` (pages); with ``follow``, the live stream.

        A prefix or ``last`` is resolved once, first: every page is of the same run.
        """
        run_id = (await self.get(run_id)).id
        if not follow:
            while True:
                params = {"after": after, "limit": _PAGE}
                raw = await self._json("GET", f"{_at(run_id)}/events", params=params)
                page = EventPage.model_validate(raw)
                for event in page.events:
                    yield event
                if not page.events:
                    return
                after = page.next_after
        async with contextlib.aclosing(self._stream(run_id, after)) as stream:
            async for event in stream:
                yield event

    async def _stream(self, run_id: str, after: int) -> AsyncGenerator[RunEvent, None]:
        """``WS /runs/{id}/stream`` from ``after``; a drop for being slow reconnects."""
        run = await self.get(run_id)  # not found: the 404, as a RunNotFoundError
        run_id = run.id
        ended = run.finished  # an ended run never runs again: its head is the end
        if ended and after >= run.head:
            return
        messages = run_messages(self.url, self._ws_token, run_id, after)
        async with contextlib.aclosing(messages):
            async for raw in messages:
                if "seq" not in raw:
                    continue  # an answer to a message we did not send
                event = RunEvent.model_validate(raw)
                yield event
                ended = ended or event.terminal
                if ended and (await self.get(run_id)).head <= event.seq:
                    return

    async def _ws_token(self) -> str:
        """A short-lived token for one WebSocket connection."""
        token: str = (await self._json("POST", "/auth/ws-token"))["token"]
        return token

    # -- control ----------------------------------------------------------------------

    async def approvals(self, run_id: str) -> list[Approval]:
        """The run's pending approval requests."""
        raw = await self._json("GET", f"{_at(run_id)}/approvals")
        return ApprovalList.model_validate(raw).approvals

    async def decide(
        self,
        run_id: str,
        request_id: str | None,
        decision: Decision,
        *,
        reason: str | None = None,
        answer: dict[str, Any] | None = None,
    ) -> Decided:
        """Allow or deny a pending request (``None``: the only one); a question's ``answer``."""
        if request_id is None:
            run_id = (await self.get(run_id)).id  # the one run, for both requests
            request_id = _only(run_id, await self.approvals(run_id))
        body = {"decision": decision, "reason": reason, "answer": answer}
        raw = await self._json("POST", f"{_at(run_id)}/approvals/{_segment(request_id)}", json=body)
        return Decided.model_validate(raw)

    async def steer(self, run_id: str, message: str) -> None:
        """Tell the agent something before its next model call."""
        await self._send("POST", f"{_at(run_id)}/steer", json={"message": message})

    async def choices(self, run_id: str) -> list[ChoiceCard]:
        """The run's options cards waiting for a choice."""
        raw = await self._json("GET", f"{_at(run_id)}/choices")
        return ChoiceCardList.model_validate(raw).cards

    async def choose(self, run_id: str, component_id: str | None, choice: str) -> Chosen:
        """Choose an option on a waiting card (``None``: the only one)."""
        if component_id is None:
            run_id = (await self.get(run_id)).id  # the one run, for both requests
            component_id = _only_card(run_id, await self.choices(run_id))
        path = f"{_at(run_id)}/components/{_segment(component_id)}/choose"
        raw = await self._json("POST", path, json={"choice": choice})
        return Chosen.model_validate(raw)

    async def pause(self, run_id: str) -> Run:
        """Pause at the next safe point."""
        return Run.model_validate(await self._json("POST", f"{_at(run_id)}/pause"))

    async def resume(
        self,
        run_id: str,
        *,
        budget_usd: float | None = None,
        budget_tokens: int | None = None,
        max_turns: int | None = None,
        max_seconds: float | None = None,
    ) -> Run:
        """Resume (with new caps, if given); the server drives it."""
        caps = {
            "budget_usd": budget_usd, "budget_tokens": budget_tokens,
            "max_turns": max_turns, "max_seconds": max_seconds,
        }  # fmt: skip
        body = {k: v for k, v in caps.items() if v is not None} or None
        return Run.model_validate(await self._json("POST", f"{_at(run_id)}/resume", json=body))

    async def cancel(self, run_id: str) -> Run:
        """Cancel the run."""
        return Run.model_validate(await self._json("POST", f"{_at(run_id)}/cancel"))

    async def fork(
        self, run_id: str, *, turn: int, message: str | None = None, model: str | None = None
    ) -> Run:
        """Fork where a turn ended; the server drives the fork."""
        body = {"turn": turn, "message": message, "model": model}
        forked = Forked.model_validate(await self._json("POST", f"{_at(run_id)}/fork", json=body))
        return await self.get(forked.id)

    # -- the world --------------------------------------------------------------------

    async def files(
        self, run_id: str, path: str | None = None, *, turn: Point = "now"
    ) -> list[FileEntry]:
        """The world's paths at or under ``path`` at a point."""
        params: dict[str, Any] = {"turn": str(turn)}
        if path is not None:
            params["path"] = path
        raw = await self._json("GET", f"{_at(run_id)}/files", params=params)
        return FileList.model_validate(raw).files

    async def read(self, run_id: str, path: str, *, turn: Point = "now") -> bytes:
        """A file's content at a point."""
        from urllib.parse import quote

        where = f"{_at(run_id)}/files/{quote(path.lstrip('/'))}"
        return (await self._send("GET", where, params={"turn": str(turn)})).content

    async def diff(
        self, run_id: str, *, start: Point = "start", end: Point = "now", path: str | None = None
    ) -> str:
        """A unified diff of the world between two points."""
        params: dict[str, Any] = {"from": str(start), "to": str(end)}
        if path is not None:
            params["path"] = path
        return (await self._send("GET", f"{_at(run_id)}/diff", params=params)).text

    async def rollback(self, run_id: str, *, to: Point = "start") -> Rollback:
        """Restore the world to its start or a turn's end."""
        raw = await self._json("POST", f"{_at(run_id)}/rollback", json={"to": to})
        return Rollback.model_validate(raw)

    async def compare(self, run_a: str, run_b: str) -> Comparison:
        """Both runs and the diff from A's last world to B's."""
        where = f"{_at(run_a)}/compare/{_segment(run_b)}"
        return Comparison.model_validate(await self._json("GET", where))

    async def keep(self, run_id: str) -> Kept:
        """Make the original directory hold this branch's world."""
        return Kept.model_validate(await self._json("POST", f"{_at(run_id)}/keep"))

    # -- the log as a file, and spend -------------------------------------------------

    async def export(self, run_id: str) -> AsyncGenerator[str, None]:
        """The run's log as JSON Lines, as the server streams it."""
        import httpx

        try:
            async with self._http.stream("GET", f"{_at(run_id)}/export") as answer:
                if answer.status_code >= 400:
                    raise error_of(answer.status_code, await answer.aread())
                async for line in answer.aiter_lines():
                    if line:
                        yield line
        except httpx.TransportError as error:
            raise StoreUnavailableError(f"cannot reach the server at {self.url}: {error}") from None

    async def import_run(
        self, lines: Iterable[str], *, as_id: str | None = None, workspace: str | None = None
    ) -> Imported:
        """Import an exported log as a new run (on the server, in a new empty world)."""
        params = {k: v for k, v in (("as", as_id), ("workspace", workspace)) if v is not None}
        body = "\n".join(line.rstrip("\n") for line in lines).encode()
        headers = {"Content-Type": "application/x-ndjson"}
        raw = await self._json("POST", "/runs/import", params=params, content=body, headers=headers)
        return Imported.model_validate(raw)

    async def spend(
        self,
        *,
        workspace: str | None = None,
        by: str = "model",
        bucket: str | None = None,
        since: str | None = None,
        until: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        blueprint: str | None = None,
        person: str | None = None,
    ) -> Spend:
        """What runs' own model calls cost, grouped and over time (the server sums)."""
        words = {
            "workspace": workspace, "by": by, "bucket": bucket, "from": since, "to": until,
            "model": model, "provider": provider, "blueprint": blueprint, "person": person,
        }  # fmt: skip
        params = {k: v for k, v in words.items() if v is not None}
        return Spend.model_validate(await self._json("GET", "/spend", params=params))

    async def trace(self, run_id: str) -> Span:
        """The run's trace, as the server builds it."""
        return Span.model_validate(await self._json("GET", f"{_at(run_id)}/trace"))

    async def processes(self, run_id: str) -> ProcessList:
        """The run's background processes, as the server folds them."""
        return ProcessList.model_validate(await self._json("GET", f"{_at(run_id)}/processes"))

    async def world_names(self, workspace: str) -> list[str]:
        """The folders of a workspace's worlds on the server, by name."""
        raw = await self._json("GET", f"/workspaces/{_segment(workspace)}/worlds")
        return list(WorldList.model_validate(raw).worlds)

    # -- nodes ------------------------------------------------------------------------

    async def nodes(self) -> NodeList:
        """The server's executor's nodes (owners and admins only)."""
        return NodeList.model_validate(await self._json("GET", "/nodes"))

    async def drain_node(self, node_id: str) -> Drained:
        """Drain a node of the server's executor (owners and admins only)."""
        if not _NODE_ID.fullmatch(node_id):  # no node id holds it: not found, as the server says
            raise NodeNotFoundError(node_id)
        raw = await self._json("POST", f"/nodes/{node_id}/drain")
        return Drained.model_validate(raw)

    # -- automations ------------------------------------------------------------------

    async def automations(self, *, workspace: str | None = None) -> AutomationList:
        """The automations of the caller's workspaces (or of ``workspace``)."""
        params = {} if workspace is None else {"workspace": workspace}
        return AutomationList.model_validate(await self._json("GET", "/automations", params=params))

    async def automation(self, automation_id: str) -> Automation:
        """One automation."""
        raw = await self._json("GET", f"/automations/{_segment(automation_id)}")
        return Automation.model_validate(raw)

    async def add_automation(
        self, spec: AutomationSpec, *, workspace: str | None = None
    ) -> AutomationCreated:
        """Store an automation; a webhook's secret is in the answer, once."""
        body = {**spec.model_dump(mode="json"), "workspace": workspace}
        return AutomationCreated.model_validate(await self._json("POST", "/automations", json=body))

    async def pause_automation(self, automation_id: str) -> Automation:
        """Stop it firing."""
        raw = await self._json("POST", f"/automations/{_segment(automation_id)}/pause")
        return Automation.model_validate(raw)

    async def resume_automation(self, automation_id: str) -> Automation:
        """Fire it again from now on."""
        raw = await self._json("POST", f"/automations/{_segment(automation_id)}/resume")
        return Automation.model_validate(raw)

    async def remove_automation(self, automation_id: str) -> None:
        """Delete it."""
        await self._send("DELETE", f"/automations/{_segment(automation_id)}")

    # -- policy replay ----------------------------------------------------------------

    async def policy_replay(self, run_id: str, policy: CandidatePolicy) -> PolicyReplay:
        """What ``policy`` would have done with the run's logged calls (the server judges)."""
        from helix.runtime import PolicyReplay

        body = {"policy": policy.model_dump(mode="json", exclude_unset=True)}
        raw = await self._json("POST", f"{_at(run_id)}/policy-replay", json=body)
        return PolicyReplay.model_validate(raw)

    async def policy_replay_workspace(
        self, workspace: str, policy: CandidatePolicy
    ) -> list[PolicyReplay]:
        """The same over every run of a workspace, oldest first."""
        from helix.runtime import PolicyReplay

        body = {"policy": policy.model_dump(mode="json", exclude_unset=True)}
        raw = await self._json("POST", f"/workspaces/{workspace}/policy-replay", json=body)
        return [PolicyReplay.model_validate(report) for report in raw["runs"]]


def _only(run_id: str, pending: list[Approval]) -> str:
    from helix.errors import ApprovalClosedError, RunStateError

    if not pending:
        raise ApprovalClosedError(f"run {run_id!r} has no pending approval")
    if len(pending) > 1:
        names = ", ".join(sorted(p.request_id for p in pending))
        raise RunStateError(
            f"run {run_id!r} has {len(pending)} pending approvals: name one of {names}"
        )
    return pending[0].request_id


def _only_card(run_id: str, waiting: list[ChoiceCard]) -> str:
    from helix.errors import ChoiceClosedError, RunStateError

    if not waiting:
        raise ChoiceClosedError(f"run {run_id!r} waits for no choice")
    if len(waiting) > 1:
        names = ", ".join(sorted(c.component_id for c in waiting))
        raise RunStateError(f"run {run_id!r} waits for {len(waiting)} choices: name one of {names}")
    return waiting[0].component_id
