"""The layering written in ``helix/__init__.py`` and docs/architecture.md, enforced.

Each module's helix imports (absolute or relative, at any depth in the file) must
come from its own layer or one below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "helix"

# What each area may import from Helix, besides itself. Each layer's set is the one
# below it plus what it adds, so the order of this table is the layering.
_BASE = {"helix.errors", "helix._util"}
_KERNEL = _BASE | {"helix.kernel"}
_TOOLS = _KERNEL | {"helix.sandbox"}
_GATES = _TOOLS | {"helix.tools"}
_RUNTIME = _GATES | {"helix.gates", "helix.providers", "helix.world"}
_TESTING = _RUNTIME | {"helix.runtime"}
_API = _TESTING | {"helix.config"}
_SERVER = _API | {"helix._version", "helix.accounts", "helix.api"}

ALLOWED: dict[str, set[str]] = {
    "helix.errors": {"helix._version"},
    "helix._version": set(),
    "helix._util": set(),
    "helix.kernel.events": set(_BASE),
    "helix.kernel.log": _BASE | {"helix.kernel.events"},
    "helix.kernel.session": _BASE | {"helix.kernel.events", "helix.kernel.log"},
    "helix.kernel": set(_BASE),
    "helix.providers": set(_KERNEL),
    "helix.sandbox": set(_KERNEL),
    "helix.tools": set(_TOOLS),
    "helix.gates": set(_GATES),
    "helix.world": set(_KERNEL),
    "helix.runtime": set(_RUNTIME),
    "helix.testing": set(_TESTING),
    "helix.api": set(_API),
    "helix.bench": _TESTING | {"helix.testing", "helix.accounts", "helix.api", "helix.server"},
    "helix.config": set(_KERNEL),
    "helix.accounts": _KERNEL | {"helix.gates"},
    "helix.server": set(_SERVER),
    "helix.cli": _SERVER | {"helix.testing", "helix.bench", "helix.server"},
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _area(module: str) -> str:
    """The most specific key of ALLOWED that ``module`` falls under."""
    matches = [a for a in ALLOWED if module == a or module.startswith(a + ".")]
    return max(matches, key=len) if matches else module


def _imports(path: Path) -> set[str]:
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
    return {name for name in found if name == "helix" or name.startswith("helix.")}


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_module_imports_only_from_layers_below(path: Path) -> None:
    module = _module_name(path)
    area = _area(module)
    if module == "helix":
        return  # the top package only re-exports
    allowed = ALLOWED.get(area)
    assert allowed is not None, f"{module} is in no known layer: add it to ALLOWED"
    for imported in _imports(path):
        target = _area(imported)
        ok = (
            target == area
            or target.startswith(area + ".")
            or any(target == a or target.startswith(a + ".") for a in allowed)
        )
        assert ok, f"{module} ({area}) may not import {imported} ({target})"


def test_kernel_knows_nothing_above_it() -> None:
    offenders = [
        f"{_module_name(p)} -> {name}"
        for p in MODULES
        if _module_name(p).startswith("helix.kernel")
        for name in _imports(p)
        if not name.startswith(("helix.kernel", "helix.errors", "helix._util"))
    ]
    assert offenders == []
