"""The engine's commands in client mode: the same output and exit codes, over HTTP."""

from __future__ import annotations

import sys
import time
from typing import Any

import typer

from helix.errors import (
    ApprovalClosedError,
    ConfigError,
    ConflictError,
    NotFoundError,
    RunStateError,
)
from helix.kernel.events import ForkPoint, RunStatus
from helix.kernel.log import RunRecord
from helix.kernel.session import SessionState

from ._client import ServerClient, ServerLogin, current_login, remotely, until_finished
from ._common import EXIT_FAILED, EXIT_OK, fail, print_json_line
from ._follow import CHILD_WAIT_TRIES, COLOURS, stops_following
from ._render import event_line, record_dict, run_lines

_ACTIVE: tuple[RunStatus, ...] = ("queued", "running", "waiting", "paused")


def record_of(raw: dict[str, Any]) -> RunRecord:
    """A run as the server describes it, as the registry row the CLI prints."""
    parent = raw.get("parent")
    return RunRecord(
        id=raw["id"],
        workspace=raw["workspace"],
        status=raw["status"],
        objective=raw["objective"],
        model=raw["model"],
        blueprint=raw.get("blueprint"),
        world=raw.get("world", ""),
        parent=None if parent is None else ForkPoint(run_id=parent["run_id"], seq=parent["seq"]),
        created_at=raw["created_at"],
        updated_at=raw["updated_at"],
        next_seq=raw["events"],
        turns=raw["turns"],
        input_tokens=raw["input_tokens"],
        output_tokens=raw["output_tokens"],
        cost_usd=raw["cost_usd"],
    )


class Remote:
    """One command's conversation with the server."""

    def __init__(self, login: ServerLogin) -> None:
        self.client = ServerClient(login)

    def run_record(self, run_id: str) -> RunRecord:
        return record_of(self.client.call("GET", f"/runs/{run_id}"))

    def runs(self, status: str | None, limit: int) -> list[RunRecord]:
        params: dict[str, Any] = {"limit": limit}
        if status is not None:
            params["status"] = status
        found: list[RunRecord] = []
        while len(found) < limit:
            page = self.client.call("GET", "/runs", params=params)
            found += [record_of(r) for r in page["runs"]]
            if page["next_cursor"] is None:
                break
            params["cursor"] = page["next_cursor"]
        return found[:limit]

    def decide(self, run_id: str, request: str | None, decision: str, reason: str | None) -> str:
        if request is None:
            pending = self.client.call("GET", f"/runs/{run_id}/approvals")["approvals"]
            if not pending:
                raise ApprovalClosedError(f"run {run_id!r} has no pending approval")
            if len(pending) > 1:
                names = ", ".join(sorted(p["request_id"] for p in pending))
                raise RunStateError(
                    f"run {run_id!r} has {len(pending)} pending approvals: name one of {names}"
                )
            request = str(pending[0]["request_id"])
        body = {"decision": decision, "reason": reason}
        decided = self.client.call("POST", f"/runs/{run_id}/approvals/{request}", json=body)
        return str(decided["request_id"])

    def control(self, run_id: str, action: str, body: dict[str, Any] | None = None) -> None:
        self.client.call("POST", f"/runs/{run_id}/{action}", json=body)

    def start(
        self,
        objective: str,
        model: str | None,
        blueprint: str | None,
        world: str | None,
        budget: float | None,
        auto_approve: bool,
        detach: bool,
        json: bool,
    ) -> int:
        """``helix run`` against the server: it drives the run; this shows it."""
        from helix.runtime import Blueprint

        body: dict[str, Any] = {
            "objective": objective,
            "model": model,
            "auto_approve": auto_approve,
        }
        if blueprint:
            loaded = Blueprint.load(blueprint)
            body["blueprint"] = loaded.model_dump(mode="json", exclude_defaults=True)
        if world is not None:
            if "/" in world or world in (".", ".."):
                raise ConfigError(
                    f"--dir {world!r}: with a server, --dir names a folder of the workspace's"
                    " worlds on the server (a plain name), not a local path"
                )
            body["world"] = world
        if budget is not None:
            body["budget_usd"] = budget
        created = self.client.call("POST", "/runs", json=body)
        if detach:
            if json:
                print_json_line({"id": created["id"], "status": created["status"]})
            else:
                typer.echo(created["id"])
            return EXIT_OK
        return self.show_live(created["id"], json=json, after=-1, ask=_ask_here(json))

    def resume(self, run_id: str, budget: float | None, json: bool) -> int:
        """``helix resume`` against the server: it resumes and drives; this shows it."""
        head = self.run_record(run_id).head
        body = None if budget is None else {"budget_usd": budget}
        self.control(run_id, "resume", body)
        return self.show_live(run_id, json=json, after=head, ask=_ask_here(json))

    def fork(
        self,
        run_id: str,
        turn: int,
        message: str | None,
        model: str | None,
        detach: bool,
        json: bool,
    ) -> int:
        """``helix fork`` against the server."""
        body = {"turn": turn, "message": message, "model": model}
        fork_id = str(self.client.call("POST", f"/runs/{run_id}/fork", json=body)["id"])
        record = self.run_record(fork_id)
        if detach:
            show_record(record, json=json) if json else typer.echo(fork_id)
            return EXIT_OK
        if not json:
            typer.echo(f"fork {fork_id} of {run_id} at turn {turn}")
        after = record.parent.seq if record.parent is not None else -1
        return self.show_live(fork_id, json=json, after=after, ask=_ask_here(json))

    def logs(self, run_id: str, *, follow: bool, after: int, json: bool) -> None:
        """``helix logs`` against the server."""

        def show(event: Any) -> None:
            typer.echo(event.to_json() if json else event_line(event))

        head = self.run_record(run_id).head
        if not follow:
            for event in self.client.events(run_id, after=after):
                show(event)
            return

        def shown(event: Any) -> bool:
            show(event)
            return until_finished(event) and event.seq >= head

        self.client.follow(run_id, after=after, stop=shown)

    def replay(self, run_id: str, *, to_seq: int | None) -> SessionState:
        """``helix replay``: the run's events from the server, folded here."""
        from helix.kernel.session import replay

        self.run_record(run_id)  # not found: the server's 404, as exit 3
        events = self.client.events(run_id)
        return replay(events, to_seq=to_seq)

    def import_lines(self, lines: list[str], as_id: str | None, json: bool) -> None:
        """``helix import`` against the server."""
        params = {} if as_id is None else {"as": as_id}
        body = "\n".join(lines).encode()
        try:
            made = self.client.call("POST", "/runs/import", params=params, content=body)
        except ConflictError as error:
            fail(f"{error}; import it under another id with --as NEW_ID", EXIT_FAILED)
        if json:
            print_json_line({"id": made["id"], "status": made["status"], "events": made["events"]})
        else:
            typer.echo(made["id"])

    def show_live(self, run_id: str, *, json: bool, after: int, ask: bool, depth: int = 0) -> int:
        """Print the run's events from ``after`` until it ends; its exit code.

        As in embedded mode, a person sees a child run's events (marked ``│``) after its
        ``agent.spawned``: the parent waits on the child meanwhile, so following the
        child to its end before reading on loses nothing.
        """
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=True)
        mark = "│ " * depth
        spent = 0.0
        final: list[str] = []

        def shown(event: Any) -> bool:
            nonlocal spent
            if json:
                sys.stdout.write(event.to_json() + "\n")
                sys.stdout.flush()
            elif not (event.type == "gate.decided" and event.data["verdict"] == "allow"):
                if event.type == "model.responded" and event.data.get("cost_usd"):
                    spent += float(event.data["cost_usd"])
                line = event_line(event)
                if event.type == "turn.ended":
                    line += f"   (spent ${spent:.4f})"
                console.print(mark + line, style=COLOURS.get(event.type), markup=False)
            if ask and event.type == "approval.requested":
                self._ask(run_id, event.data)
            if event.type == "agent.spawned" and not json:
                self._show_child(str(event.data["child_run_id"]), ask=ask, depth=depth + 1)
            if stops_following(event, depth):
                final.append(event.type)
                return True
            return False

        self.client.follow(run_id, after=after, stop=shown)
        return EXIT_OK if final == ["run.completed"] else EXIT_FAILED

    def _show_child(self, child_id: str, *, ask: bool, depth: int) -> None:
        for _ in range(CHILD_WAIT_TRIES):  # the parent logs the id just before creating it
            try:
                self.client.call("GET", f"/runs/{child_id}")
                break
            except NotFoundError:
                time.sleep(0.05)
        else:
            return  # never created (the parent's process died): nothing to show
        self.show_live(child_id, json=False, after=0, ask=ask, depth=depth)

    def _ask(self, run_id: str, data: dict[str, Any]) -> None:
        answer = input(f"allow {data['name']} {data['args']}? [y/n] ").strip().lower()
        decision = "allow" if answer in ("y", "yes") else "deny"
        try:
            self.decide(run_id, str(data["request_id"]), decision, None)
        except Exception as error:  # decided elsewhere meanwhile, or expired
            typer.echo(f"not recorded: {error}", err=True)

    def status(self) -> None:
        health = self.client.call("GET", "/health")
        me = self.client.call("GET", "/me")
        url, version = self.client.login.url, health["version"]
        roles = ", ".join(f"{w}: {r}" for w, r in me["workspaces"].items())
        typer.echo(f"server     {url}  ({health['status']}, helix {version})")
        typer.echo(f"user       {me['user']}  ({roles})")
        self.active(self.runs(None, 200))

    @staticmethod
    def active(records: list[RunRecord]) -> None:
        active = [r for r in records if r.status in _ACTIVE]
        typer.echo(f"active     {len(active)} run{'s' if len(active) != 1 else ''}")
        for record in active:
            typer.echo(f"  {record.id}  {record.status:<9}  {record.objective[:50]}")


def _ask_here(json: bool) -> bool:
    return sys.stdin.isatty() and not json


def print_records(records: list[RunRecord], *, json: bool) -> None:
    """``helix runs`` output, whichever side the runs came from."""
    for record in records:
        if json:
            print_json_line(record_dict(record))
        else:
            typer.echo(
                f"{record.id}  {record.status:<9}  t{record.turns:<3}"
                f"  ${record.cost_usd:<8.4f}  {record.objective[:50]}"
            )
    if not records and not json:
        typer.echo("no runs yet: try `helix demo`")


def show_record(record: RunRecord, *, json: bool) -> None:
    """``helix show`` output."""
    if json:
        print_json_line(record_dict(record))
    else:
        typer.echo("\n".join(run_lines(record)))


def connected() -> Remote | None:
    """The server to talk to, when the CLI is in client mode."""
    login = remotely(current_login)
    return None if login is None else Remote(login)
