"""The wire model of a reply's pieces as they stream (``HelixApi.replies``)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from ._models import _Out

PieceType = Literal["reply.text", "reply.tool_call", "reply.restart"]
PIECE_TYPES: tuple[str, ...] = get_args(PieceType)
"""The ``type`` of every piece message (``helix.runtime.piece_message``'s); no event's."""


class ReplyPiece(_Out):
    """A piece of one of a run's model replies as it arrives: never an event (no seq).

    ``reply.text``: ``text``, the next text. ``reply.tool_call``: a call by its
    ``index``, its ``id`` and ``name`` on its first piece, then fragments of its JSON
    arguments (``args``). ``reply.restart``: the turn's pieces so far are void (the
    stream broke, ``reason`` says how); the whole reply comes as ``model.responded``.
    """

    type: PieceType
    run_id: str
    turn: int
    text: str | None = None
    index: int | None = None
    id: str | None = None
    name: str | None = None
    args: str | None = None
    reason: str | None = None

    @classmethod
    def of(cls, message: dict[str, Any]) -> ReplyPiece:
        """From its wire message (``helix.runtime.piece_message``)."""
        return cls.model_validate(message)
