"""Scenarios: scripted model replies, played by ``scripted:PATH`` and the mock server.

A scenario file (JSON, YAML or TOML) is a list of steps; each step is one model reply
(text, tool calls, usage, a delay) or an HTTP error the mock server answers with::

    steps:
      - text: "Let me look."
        tool_calls: [{name: read_file, args: {path: README.md}}]
      - error: {status: 429, headers: {Retry-After: "1"}}
      - tool_calls: [{name: write_file, raw_args: '{"path": '}]   # arguments that do not parse
      - text: ""                                                  # an empty reply
      - text: "Done."
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from helix._util import FileProblem, first_problem, parse_structured, read_structured
from helix.errors import ScenarioError


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ScenarioToolCall(_Strict):
    """A tool call a scripted reply asks for."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict[str, Any])
    id: str | None = None
    """The call's id; made up (``call_<step>_<n>``) when not given."""
    raw_args: str | None = None
    """The arguments as text, sent exactly so instead of ``args``: to play a model whose
    call does not parse (``'{"path": '``, ``'[1, 2]'``)."""

    @model_validator(mode="after")
    def _one_kind_of_arguments(self) -> ScenarioToolCall:
        if self.raw_args is not None and self.args:
            raise ValueError("give args or raw_args, not both")
        return self

    def arguments_text(self) -> str:
        """The arguments as the wire carries them: ``raw_args``, else ``args`` as JSON."""
        return self.raw_args if self.raw_args is not None else json.dumps(self.args)


class ScenarioUsage(_Strict):
    """Tokens a scripted reply reports."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int | None = Field(default=None, ge=0)


class ScenarioHttpError(_Strict):
    """An HTTP error the mock server answers with instead of a reply."""

    status: int = Field(ge=400, le=599)
    message: str = "scripted error"
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    mid_stream: bool = False
    """For a streamed request: start a 200 stream (the step's ``text``, if any, in pieces),
    then send the error as an event in it (as providers do when they fail part-way).
    Plain requests get the HTTP error."""


class ScenarioStep(_Strict):
    """One model reply, or one error."""

    text: str = ""
    tool_calls: list[ScenarioToolCall] = Field(default_factory=list[ScenarioToolCall])
    usage: ScenarioUsage | None = None
    """Reported usage; estimated from the text (4 characters a token) when not given."""
    delay_s: float = Field(default=0.0, ge=0)
    """How long to wait before answering."""
    error: ScenarioHttpError | None = None
    pause_mid_stream: bool = False
    """For a streamed reply: send its first piece of text, then wait for the mock
    server's ``release()`` before the rest (to see a reply half-way)."""
    held: bool = False
    """Wait for the mock server's ``release()`` before answering (to act while this call
    is in flight, however slow the machine); once released, held steps answer at once.
    Played by ``scripted:`` models as if not held."""


class Scenario(_Strict):
    """A list of steps, played in order."""

    steps: list[ScenarioStep]
    repeat: bool = False
    """Start over after the last step instead of refusing further requests."""

    @classmethod
    def of(cls, *steps: ScenarioStep | dict[str, Any], repeat: bool = False) -> Scenario:
        """Build a scenario from steps or step dictionaries."""
        return cls(
            steps=[s if isinstance(s, ScenarioStep) else ScenarioStep(**s) for s in steps],
            repeat=repeat,
        )

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Read a JSON, YAML or TOML scenario; ``ScenarioError`` says what to fix."""
        path = Path(path)
        try:
            data = read_structured(path, "scenario")
        except FileProblem as problem:
            if problem.stage == "read":
                raise ScenarioError(f"cannot read scenario {path}: {problem}") from None
            raise ScenarioError(f"scenario {path} does not parse: {problem}") from None
        return cls._of_data(data, path)

    @classmethod
    def parse(cls, text: str, path: str | Path) -> Scenario:
        """A scenario from the text of the file ``path`` (its suffix says the format)."""
        path = Path(path)
        try:
            data = parse_structured(text, path.suffix, "scenario")
        except FileProblem as problem:
            raise ScenarioError(f"scenario {path} does not parse: {problem}") from None
        return cls._of_data(data, path)

    @classmethod
    def _of_data(cls, data: Any, path: Path) -> Scenario:
        if isinstance(data, list):
            data = {"steps": data}
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            raise ScenarioError(
                f"scenario {path}: {first_problem(error)} (a scenario is a list of steps:"
                " text, tool_calls, usage, delay_s or error)"
            ) from None


def estimate_tokens(text: str) -> int:
    """Return a stand-in token count: four characters a token, at least one."""
    return max(1, len(text) // 4)
