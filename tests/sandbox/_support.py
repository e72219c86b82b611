"""Helpers for sandbox tests (the host-side observers live in ``helix.testing._host``)."""

from __future__ import annotations

from pathlib import Path


def entries(folder: Path) -> set[Path]:
    """The sub-directories of ``folder`` (none if it does not exist)."""
    return {p for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def write(path: Path, text: str) -> None:
    path.write_text(text)
