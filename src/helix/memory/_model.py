"""Memories and artifacts as plain values, the limits on them, and the checks of input.

Everything here comes from outside (a model's arguments, a person's edit, an import
file): each check raises ``MemoryInputError`` saying what is wrong.
"""

from __future__ import annotations

import mimetypes
import re
import unicodedata
from typing import Literal

from pydantic import BaseModel

from helix.errors import MemoryInputError

Scope = Literal["personal", "workspace"]
"""``personal``: the person's own (one per user, whatever the workspace); ``workspace``:
shared by the workspace's members."""
SCOPES: tuple[Scope, ...] = ("personal", "workspace")

MAX_TEXT = 8000
"""Characters in one memory."""
MAX_TAGS = 16
MAX_TAG = 40
MAX_KEY = 200
MAX_NAME = 200
"""Characters in an artifact's name."""
MAX_ARTIFACT_BYTES = 10 << 20
"""Bytes in one artifact version (10 MiB)."""
MAX_QUERY = 500
"""Characters of a recall query."""
MAX_RECALL = 50
"""Memories one recall returns at most."""

_TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")
_MEDIA = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}")


class Memory(BaseModel):
    """One memory: a short text, with tags and an optional key (unique in its scope)."""

    id: str
    scope: Scope
    owner: str
    """The user (``personal``) or the workspace (``workspace``) it belongs to."""
    text: str
    tags: list[str] = []
    key: str | None = None
    by: str
    """Who wrote it last: ``user:NAME`` or ``run:ID``."""
    created_at: str
    updated_at: str
    rank: float | None = None
    """How well it matched a recall (higher is better); ``None`` outside a search."""


class Artifact(BaseModel):
    """One version of a named file (its bytes are read apart: ``content``)."""

    scope: Scope
    owner: str
    name: str
    version: int
    media_type: str
    size: int
    sha256: str
    by: str
    at: str


class AuditEntry(BaseModel):
    """One change a person made through the door (runs' changes are in their logs)."""

    at: str
    by: str
    action: str
    """``remember``, ``update``, ``forget``, ``save_artifact``, ``delete_artifact``, ``import``."""
    scope: Scope
    owner: str
    target: str
    """The memory's id or the artifact's name."""


def check_scope(scope: str) -> Scope:
    """``scope`` as a ``Scope``; ``MemoryInputError`` names the valid ones."""
    for known in SCOPES:
        if scope == known:
            return known
    raise MemoryInputError(f"unknown scope {scope!r}: choose personal or workspace")


def check_text(text: str) -> str:
    """A memory's text, stripped: not empty, at most ``MAX_TEXT`` characters, no NUL."""
    text = text.strip()
    if not text:
        raise MemoryInputError("the memory is empty: say what to remember")
    if len(text) > MAX_TEXT:
        raise MemoryInputError(f"the memory has {len(text)} characters: at most {MAX_TEXT}")
    if "\x00" in text:
        raise MemoryInputError("the memory holds a NUL character")
    return text


def check_tags(tags: list[str] | None) -> list[str]:
    """Tags, each a word (letters, digits, ``_.:-``), at most ``MAX_TAGS``; duplicates dropped."""
    found: list[str] = []
    for tag in tags or []:
        if not isinstance(tag, str) or len(tag) > MAX_TAG or not _TAG.fullmatch(tag):
            raise MemoryInputError(
                f"invalid tag {str(tag)[:60]!r}: up to {MAX_TAG} letters, digits, '_', '.', ':'"
                " or '-', starting with a letter or digit"
            )
        if tag not in found:
            found.append(tag)
    if len(found) > MAX_TAGS:
        raise MemoryInputError(f"{len(found)} tags: at most {MAX_TAGS}")
    return found


def check_key(key: str | None) -> str | None:
    """An optional key: 1 to ``MAX_KEY`` printable characters."""
    if key is None:
        return None
    if not key.strip() or len(key) > MAX_KEY or _controls(key):
        raise MemoryInputError(f"invalid key: 1 to {MAX_KEY} printable characters")
    return key


def check_name(name: str) -> str:
    """An artifact's name: one plain file name (no slashes, ``..``, hidden names, controls)."""
    if not name or len(name) > MAX_NAME:
        raise MemoryInputError(f"invalid artifact name: 1 to {MAX_NAME} characters")
    if "/" in name or "\\" in name:
        raise MemoryInputError(f"invalid artifact name {name!r}: no '/' or '\\' (one name)")
    if name.startswith(".") or name.strip() != name:
        raise MemoryInputError(
            f"invalid artifact name {name!r}: no hidden names, no leading or trailing spaces"
        )
    if _controls(name):
        raise MemoryInputError(f"invalid artifact name {name!r}: no control characters")
    return name


def check_media_type(media_type: str | None, name: str) -> str:
    """The media type given (``type/subtype``, no parameters), else guessed from ``name``."""
    if media_type is None:
        guessed, _encoding = mimetypes.guess_type(name, strict=False)
        return guessed if guessed and _MEDIA.fullmatch(guessed) else "application/octet-stream"
    if not _MEDIA.fullmatch(media_type):
        raise MemoryInputError(f"invalid media type {media_type[:80]!r}: type/subtype, lowercase")
    return media_type


def check_content(content: bytes) -> bytes:
    """An artifact's bytes: at most ``MAX_ARTIFACT_BYTES``."""
    if len(content) > MAX_ARTIFACT_BYTES:
        raise MemoryInputError(
            f"the artifact has {len(content)} bytes: at most {MAX_ARTIFACT_BYTES} (10 MiB)"
        )
    return content


def check_query(query: str) -> str:
    """A recall query: at most ``MAX_QUERY`` characters (any text: it is never syntax)."""
    if len(query) > MAX_QUERY:
        raise MemoryInputError(f"the query has {len(query)} characters: at most {MAX_QUERY}")
    return query.replace("\x00", " ")


def search_words(query: str) -> list[str]:
    """The words of a query, as both backends search them: letters and digits only.

    Quotes, ``*``, ``-``, ``NEAR``, ``AND``/``OR`` and any other search syntax are
    never operators: each word is searched as itself, all of them required.
    """
    return re.findall(r"\w+", query)[:32]


def _controls(text: str) -> bool:
    return any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text)
