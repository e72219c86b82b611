"""The wire models of options cards: what waits for a person's choice, and the choice."""

from __future__ import annotations

from pydantic import Field

from helix.kernel.session import PendingChoice

from ._models import _Body, _Out


class ChoiceOption(_Out):
    """One option of an options card."""

    id: str
    label: str
    description: str | None = None


class ChoiceCard(_Out):
    """An options card waiting for a person's choice (an ``ask_choice`` call)."""

    component_id: str
    call_id: str
    question: str
    title: str | None = None
    choices: list[ChoiceOption]
    expires_at: str | None
    """When the wait ends without a choice (ISO 8601, UTC)."""

    @classmethod
    def of(cls, pending: PendingChoice) -> ChoiceCard:
        """The wire form of a folded waiting card."""
        props = pending.props
        return cls(
            component_id=pending.component_id,
            call_id=pending.call_id,
            question=str(props.get("question", "")),
            title=props.get("title"),
            choices=[ChoiceOption.model_validate(c) for c in props.get("choices", [])],
            expires_at=pending.expires_at,
        )


class ChoiceCardList(_Out):
    """The run's options cards waiting for a choice."""

    cards: list[ChoiceCard]


class ChoiceBody(_Body):
    """``POST /runs/{id}/components/{component_id}/choose``."""

    choice: str = Field(min_length=1, max_length=64)
    """The chosen option's id."""


class Chosen(_Out):
    """A recorded choice."""

    component_id: str
    choice: str
