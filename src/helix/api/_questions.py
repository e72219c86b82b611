"""A tool source's question on a pending approval, as the door shows it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SourceQuestion(BaseModel):
    """What a tool source asks a person (an MCP elicitation): shown, never obeyed."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, serialize_by_alias=True)

    source: str
    message: str
    fields: dict[str, Any] = Field(default_factory=dict[str, Any], alias="schema")
    """The answer's flat JSON Schema (``schema`` on the wire): an object of string,
    number, integer, boolean or enum fields; empty: a plain yes or no."""


def question_of(folded: Mapping[str, Any] | None) -> SourceQuestion | None:
    """A pending approval's question as the session folded it (``None``: not a question)."""
    return None if folded is None else SourceQuestion.model_validate(folded)
