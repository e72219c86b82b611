"""The wire models of a workspace's stored blueprints: versions, history, a diff.

A stored blueprint is a name with versions 1, 2, 3…: every save adds one (who saved
it, when, an optional one-line note) and none is ever changed. A diff is a unified
text diff of two versions' canonical YAML (keys sorted) and the fields that changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from helix.accounts import StoredBlueprint


class BlueprintInfo(BaseModel):
    """One version of a stored blueprint, without its fields."""

    model_config = ConfigDict(frozen=True)

    workspace: str
    name: str
    version: int
    """1, 2, 3… (a list's item: the latest)."""
    by: str
    """Who saved it (``user:ann``); ``unknown`` for one stored before versions."""
    at: str
    """When (ISO 8601, UTC)."""
    note: str = ""
    """The one-line note given with the save (``rollback to v2`` for a rollback)."""

    @classmethod
    def of(cls, stored: StoredBlueprint) -> BlueprintInfo:
        """From the account store's value."""
        return cls(
            workspace=stored.workspace, name=stored.name, version=stored.version,
            by=stored.by, at=stored.at, note=stored.note,
        )  # fmt: skip


class BlueprintVersion(BlueprintInfo):
    """One version of a stored blueprint, with its fields."""

    blueprint: dict[str, Any]
    """The blueprint's fields as saved (those that differ from the defaults, and ``name``)."""

    @classmethod
    def of(cls, stored: StoredBlueprint) -> BlueprintVersion:
        """From the account store's value."""
        info = BlueprintInfo.of(stored).model_dump()
        return cls(**info, blueprint=stored.body)


class FieldChange(BaseModel):
    """A field that differs between two versions, by its dotted path (``budget.usd``)."""

    model_config = ConfigDict(frozen=True)

    path: str
    change: Literal["added", "removed", "changed"]


class BlueprintDiff(BaseModel):
    """Version ``a`` to version ``b`` of a stored blueprint."""

    model_config = ConfigDict(frozen=True)

    name: str
    a: int
    b: int
    diff: str
    """A unified diff of the two versions' canonical YAML (empty: the same fields)."""
    changed: list[FieldChange] = Field(default_factory=list[FieldChange])
    """Each field added, removed or changed (lists compare whole), sorted by path."""


def blueprint_yaml(body: dict[str, Any]) -> str:
    """A blueprint's fields as YAML with sorted keys: the same fields, the same text."""
    import yaml

    text = yaml.safe_dump(body, sort_keys=True, default_flow_style=False, allow_unicode=True)
    return str(text)


def field_changes(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[FieldChange]:
    """The fields that differ, by dotted path; mappings are compared key by key."""
    changes: list[FieldChange] = []
    for key in sorted(old.keys() | new.keys()):
        path = f"{prefix}{key}"
        if key not in new:
            changes.append(FieldChange(path=path, change="removed"))
        elif key not in old:
            changes.append(FieldChange(path=path, change="added"))
        elif isinstance(old[key], dict) and isinstance(new[key], dict):
            changes += field_changes(old[key], new[key], f"{path}.")
        elif old[key] != new[key]:
            changes.append(FieldChange(path=path, change="changed"))
    return changes


def blueprint_diff(name: str, a: StoredBlueprint, b: StoredBlueprint) -> BlueprintDiff:
    """The diff from version ``a`` to version ``b`` of the blueprint ``name``."""
    import difflib

    lines = difflib.unified_diff(
        blueprint_yaml(a.body).splitlines(keepends=True),
        blueprint_yaml(b.body).splitlines(keepends=True),
        fromfile=f"{name} v{a.version}",
        tofile=f"{name} v{b.version}",
    )
    return BlueprintDiff(
        name=name, a=a.version, b=b.version, diff="".join(lines),
        changed=field_changes(a.body, b.body),
    )  # fmt: skip
