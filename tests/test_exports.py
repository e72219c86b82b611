"""Each public package re-exports a curated surface: ``__all__`` is exact."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _public_packages() -> list[str]:
    """Every package of Helix whose dotted name has no private (``_``) part."""
    found = []
    for init in sorted((SRC / "helix").rglob("__init__.py")):
        parts = init.parent.relative_to(SRC).parts
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


PUBLIC = _public_packages()


def test_every_public_package_is_checked() -> None:
    """A new package is found here without anyone remembering to list it."""
    assert {"helix", "helix.api", "helix.gates", "helix.runtime", "helix.kernel.log"} <= set(PUBLIC)
    assert not [name for name in PUBLIC if "._" in name]


@pytest.mark.parametrize("name", PUBLIC)
def test_all_is_exact(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)  # ruff's RUF022 keeps it sorted
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr}"
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr not in ("annotations",)
    }
    assert public <= set(exported), f"{name} leaks {sorted(public - set(exported))}"


@pytest.mark.parametrize("name", PUBLIC)
def test_nothing_private_is_exported(name: str) -> None:
    """Each name is the package's own, or another package's public name passed on."""
    module = importlib.import_module(name)
    for attr in module.__all__:
        if attr.startswith("__"):
            continue
        assert not attr.startswith("_"), f"{name} exports private {attr}"
        value = getattr(module, attr)
        if not isinstance(value, type | types.FunctionType):
            continue  # an object's __module__ is its class's: it is the package's own
        origin = getattr(value, "__module__", None)
        if not isinstance(origin, str) or not origin.startswith("helix"):
            continue
        if origin == name or origin.startswith(name + "."):
            continue
        owner = origin.split("._")[0]
        exported = getattr(importlib.import_module(owner), "__all__", [])
        assert any(getattr(importlib.import_module(owner), n, None) is value for n in exported), (
            f"{name} exports {attr} from {origin}, which {owner} does not export"
        )


SHARED_CLASS_NAMES = {
    "ToolCall": "a model's request (providers) and its event record (kernel.events)",
    "ToolResult": "a message to the model (providers) and what a tool returns (tools)",
    "Usage": "tokens in an event (kernel.events) and in the folded session (kernel.session)",
}
"""Public class names still defined twice; each is a rename waiting (none may be added)."""


def test_no_two_classes_share_a_public_name() -> None:
    """One name, one class: two ``RunCreated`` (an event and a response body) misled readers."""
    import ast

    where: dict[str, list[str]] = {}
    for path in sorted((SRC / "helix").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where.setdefault(node.name, []).append(str(path.relative_to(SRC)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert set(shared) <= set(SHARED_CLASS_NAMES), {
        n: p for n, p in shared.items() if n not in SHARED_CLASS_NAMES
    }
