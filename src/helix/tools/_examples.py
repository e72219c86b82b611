"""Two example tools with effects outside the world, one of each revertible kind.

``record_create`` (``external-compensate``) creates a record in a small local service
(a JSON file) at once and registers the compensating delete a rollback runs.
``outbox_send`` (``external-withhold``) sends nothing when called: the message is
queued in the log, delivered (appended to the service's outbox) only when the run is
committed (``helix keep``), and dropped by a rollback. They are not offered to models
by default: ``example_tools(folder)`` makes them for a registry that wants them.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ._tool import Effect, ToolContext, ToolDef, ToolResult, tool


class RecordService:
    """A JSON file of records: the stand-in for an outside system with a create API."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.records_file = folder / "records.json"
        self.outbox_file = folder / "outbox.jsonl"

    def records(self) -> dict[str, dict[str, Any]]:
        """Every record, by id."""
        try:
            data = json.loads(self.records_file.read_text())
        except FileNotFoundError:
            return {}
        records: dict[str, dict[str, Any]] = data["records"]
        return records

    def create(self, fields: dict[str, str]) -> str:
        """Add a record; returns its new id."""
        data = self._load()
        data["next"] += 1
        record_id = f"rec_{data['next']}"
        data["records"][record_id] = fields
        self._save(data)
        return record_id

    def delete(self, record_id: str) -> bool:
        """Remove a record; False if it was not there."""
        data = self._load()
        found = data["records"].pop(record_id, None) is not None
        self._save(data)
        return found

    def deliver(self, message: dict[str, Any]) -> None:
        """Put a message in the outbox (what "sent" means here)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.outbox_file.open("a") as out:
            out.write(json.dumps(message) + "\n")

    def sent(self) -> list[dict[str, Any]]:
        """The messages delivered so far."""
        try:
            lines = self.outbox_file.read_text().splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines]

    def _load(self) -> dict[str, Any]:
        try:
            data: dict[str, Any] = json.loads(self.records_file.read_text())
        except FileNotFoundError:
            data = {"next": 0, "records": {}}
        return data

    def _save(self, data: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=self.folder)
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(temporary, self.records_file)


def example_tools(folder: Path) -> tuple[ToolDef, ToolDef]:
    """``record_create`` and ``outbox_send``, acting on the service kept in ``folder``."""
    service = RecordService(folder)

    async def delete_record(ctx: ToolContext, args: dict[str, Any]) -> str:
        found = service.delete(str(args["id"]))
        return f"deleted record {args['id']}" if found else f"record {args['id']} was already gone"

    @tool(effect="external-compensate", undo=delete_record)
    async def record_create(ctx: ToolContext, name: str, fields: dict[str, str]) -> ToolResult:
        """Create a record called `name` with `fields` in the record service."""
        record_id = service.create({"name": name, **fields})
        effect = Effect("compensable", {"id": record_id}, f"created record {record_id}")
        return ToolResult(ok=True, output=f"created record {record_id}", effects=(effect,))

    async def deliver(ctx: ToolContext, args: dict[str, Any]) -> str:
        service.deliver(args)
        return f"sent to {args['to']}"

    @tool(effect="external-withhold", perform=deliver)
    async def outbox_send(ctx: ToolContext, to: str, subject: str, body: str) -> ToolResult:
        """Send a message; it is queued and goes out when the run is committed."""
        message = {"to": to, "subject": subject, "body": body}
        effect = Effect("withheld", message, f"message to {to}: {subject}")
        return ToolResult(
            ok=True,
            output=f"queued a message to {to} (sent when the run is kept)",
            effects=(effect,),
        )

    return record_create, outbox_send
