"""A run's tool choice: what each of its requests lets the model do with its tools.

The blueprint's ``tool_choice`` is ``auto`` (the model decides), ``none`` (it may call
no tool: every request says so), ``required`` (it must call one) or the name of one of
the run's tools (it must call that one). A forced choice (``required``, a name) holds
until the model has made a call that was not rejected as its mistake, in a turn that
ended (``SessionState.tool_called``, folded from the log, so a resumed run knows); from
then on requests go with ``auto``, so a run is never made to call tools forever. A
request that offers no tools (``plan_then_act``'s planning call) goes with ``auto``:
there is nothing to choose from.
"""

from __future__ import annotations

from collections.abc import Sequence

from helix.errors import ConfigError
from helix.kernel.session import SessionState
from helix.providers import TOOL_CHOICES, ToolChoice


def is_forced(choice: ToolChoice) -> bool:
    """Whether ``choice`` makes the model call a tool (``required``, or a tool's name)."""
    return choice not in ("auto", "none")


def choice_now(choice: ToolChoice, state: SessionState) -> ToolChoice:
    """The run's ``choice`` as it stands: a forced one is ``auto`` once the model called."""
    return "auto" if is_forced(choice) and state.tool_called else choice


def forced_tool(choice: ToolChoice, state: SessionState) -> str | None:
    """The one tool the model must call now, while ``choice`` names one (else ``None``)."""
    now = choice_now(choice, state)
    return None if now in TOOL_CHOICES else now


def request_choice(choice: ToolChoice, state: SessionState, offered: Sequence[str]) -> ToolChoice:
    """The ``tool_choice`` of the next request, which offers the tools ``offered``.

    ``ConfigError`` if it names a tool not among them (``require_offered``).
    """
    if not offered:
        return "auto"
    now = choice_now(choice, state)
    require_offered(now, offered)
    return now


def require_offered(choice: ToolChoice, offered: Sequence[str]) -> None:
    """``ConfigError`` unless the run's tools (``offered``) leave ``choice`` something to force.

    A tool's name must be one of them; ``required`` needs at least one.
    """
    listed = ", ".join(sorted(offered)) or "none"
    if choice == "required" and not offered:
        raise ConfigError(
            "tool_choice is required, but the run offers no tools: give it tools, or"
            " drop tool_choice"
        )
    if choice not in TOOL_CHOICES and choice not in offered:
        raise ConfigError(
            f"tool_choice names the tool {choice!r}, which the run does not offer (its"
            f" tools: {listed}): name one of them, or use required"
        )
