"""Reading small settings files (JSON, YAML or TOML) with one-line problems."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError


class FileProblem(ValueError):
    """A file could not be read, or did not parse; ``detail`` is one line."""

    def __init__(self, stage: Literal["read", "parse"], detail: str) -> None:
        super().__init__(detail)
        self.stage = stage
        self.detail = detail


def read_structured(path: Path, what: str) -> Any:
    """Parse ``path`` by its suffix (``.json``, ``.yaml``/``.yml``, ``.toml``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise FileProblem("read", str(error)) from None
    return parse_structured(text, path.suffix, what)


def parse_structured(text: str, suffix: str, what: str) -> Any:
    """Parse ``text`` by a file suffix (``.json``, ``.yaml``/``.yml``, ``.toml``)."""
    suffix = suffix.lower()
    try:
        if suffix == ".json":
            return json.loads(text)
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
    except Exception as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise FileProblem("parse", lines[0]) from None
    raise FileProblem("parse", f"unknown {what} format {suffix!r}: use .json, .yaml or .toml")


def first_problem(error: ValidationError) -> str:
    """The first validation problem as ``field.path: message``."""
    item = error.errors()[0]
    where = ".".join(str(p) for p in item["loc"]) or "(top)"
    return f"{where}: {item['msg']}"
