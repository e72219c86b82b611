"""Workflow YAML: read as untrusted text (size-capped, no aliases or tags), written canonically.

A workflow's YAML may come from anyone (a file in a world, a request body, an agent),
so it is read with limits: at most ``MAX_TEXT`` bytes, plain YAML only (an alias,
``*name``, is refused: a few lines of them can stand for billions of nodes; so is any
tag beyond YAML's own), then checked as a ``Workflow``. ``dump`` writes the one
canonical text of a definition, and ``parse(dump(w)) == w`` for every workflow.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from helix._util import first_problem
from helix.errors import WorkflowError

from ._model import Workflow

MAX_TEXT = 256 * 1024
"""The largest workflow text read (bytes)."""


def load_text(text: str, *, source: str = "workflow") -> Workflow:
    """Parse YAML (or JSON) into a checked ``Workflow``; ``WorkflowError`` says why not."""
    if len(text.encode("utf-8", "replace")) > MAX_TEXT:
        raise WorkflowError(f"{source}: larger than {MAX_TEXT // 1024} KiB")
    return from_data(_safe_yaml(text, source), source=source)


def load_file(path: Path, *, source: str | None = None) -> Workflow:
    """Read a workflow file (``.yaml``, ``.yml`` or ``.json``), refusing large ones and links."""
    shown = source or str(path)
    try:
        if path.is_symlink():
            raise WorkflowError(f"{shown}: is a link; give the file itself")
        with path.open("rb") as handle:
            raw = handle.read(MAX_TEXT + 1)
    except OSError as error:
        raise WorkflowError(f"{shown}: cannot read it: {error.strerror or error}") from None
    if len(raw) > MAX_TEXT:
        raise WorkflowError(f"{shown}: larger than {MAX_TEXT // 1024} KiB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkflowError(f"{shown}: is not UTF-8 text") from None
    return load_text(text, source=shown)


def load_in_world(world: Path, path: str) -> Workflow:
    """A workflow file in the folder ``world``: refused if it (or a link on the way) leads out."""
    root = world.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root) or target == root:
        raise WorkflowError(f"{path}: not a file in the world")
    return load_file(target, source=path)


def from_data(data: object, *, source: str = "workflow") -> Workflow:
    """Check JSON data as a ``Workflow``; ``WorkflowError`` names the field and the reason."""
    if not isinstance(data, dict):
        raise WorkflowError(f"{source}: a workflow is a mapping with a name and steps")
    try:
        return Workflow.model_validate(data)
    except ValidationError as error:
        raise WorkflowError(f"{source}: {first_problem(error)}") from None


def dump(workflow: Workflow) -> str:
    """The canonical YAML of ``workflow`` (keys in the model's order, defaults left out)."""
    import yaml

    return str(
        yaml.safe_dump(
            workflow.to_data(),
            sort_keys=False,
            allow_unicode=True,
            width=100,
            default_flow_style=None,
        )
    )


def _safe_yaml(text: str, source: str) -> Any:
    import yaml

    class _Plain(yaml.SafeLoader):
        """YAML's own types only, and no aliases."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise yaml.YAMLError("aliases (*name) are not allowed in a workflow")
            return super().compose_node(parent, index)

    try:
        data = yaml.load(text, Loader=_Plain)
    except yaml.YAMLError as error:
        lines = str(error).strip().splitlines() or ["not YAML"]
        raise WorkflowError(f"{source}: does not parse: {lines[0]}") from None
    except RecursionError:
        raise WorkflowError(f"{source}: nested too deeply") from None
    try:
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError):
        raise WorkflowError(f"{source}: holds values JSON cannot (dates, binary, NaN)") from None
    except RecursionError:
        raise WorkflowError(f"{source}: nested too deeply") from None
    return data
