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
_EXTENSIONS = _GATES | {"helix.gates", "helix.providers", "helix.ui", "helix.notify"}
"""What plugins may use: everything a tool, gate, provider, component or notifier is."""
_RUNTIME = _EXTENSIONS | {"helix.world", "helix.mcp.client", "helix.plugins"}
_TESTING = _RUNTIME | {"helix.runtime"}
_WORKFLOWS = _TESTING | {"helix.runtime"}
"""Workflows: definitions, their store, their task graphs (``to_plan``)."""
_API = _WORKFLOWS | {
    "helix.config",
    "helix.accounts",
    "helix.automations",
    "helix.budgets",
    "helix.workflows",
    "helix.memory",
}
_DISTRIBUTED = _API | {"helix.distributed"}
"""Past one process: what the executors, the Ray tier and the cluster commands use."""
_SERVER = _DISTRIBUTED | {
    "helix._version",
    "helix.accounts",
    "helix.api",
    "helix.notify",
    "helix.telemetry",
}

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
    "helix.ui": set(_KERNEL),
    "helix.mcp": set(_BASE),
    "helix.mcp.client": set(_GATES),
    "helix.plugins": set(_EXTENSIONS),
    "helix.packs": _EXTENSIONS | {"helix.plugins"},
    "helix.runtime": set(_RUNTIME),
    "helix.testing": set(_TESTING),
    "helix.workflows": set(_WORKFLOWS),
    "helix.memory": set(_WORKFLOWS),
    "helix.api": set(_API),
    "helix.distributed": set(_API),
    "helix.bench": _DISTRIBUTED | {"helix.testing", "helix.accounts", "helix.api", "helix.server"},
    "helix.config": set(_KERNEL),
    "helix.notify": set(_KERNEL),
    "helix.telemetry": _KERNEL | {"helix._version"},
    "helix.accounts": _KERNEL | {"helix.gates"},
    "helix.automations": set(_KERNEL),
    "helix.budgets": set(_KERNEL),
    "helix.server": set(_SERVER),
    "helix.mcp.server": _API | {"helix._version", "helix.api"},
    "helix.cli": _SERVER | {"helix.testing", "helix.bench", "helix.server", "helix.mcp.server"},
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


# -- import circles -----------------------------------------------------------------


def _runtime_imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """Every import the module can execute: at module level or in a function body.

    Only ``if TYPE_CHECKING:`` blocks are left out: they never run, and annotations may
    name a module above (``_setup`` names the ``Engine`` that builds it).
    """
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for branch in node.orelse:
                visit(branch)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found


_BY_NAME = {_module_name(p): p for p in MODULES}


def _edges(path: Path) -> set[str]:
    """The Helix modules importing ``path`` runs, its parent packages included.

    ``from P import n`` runs ``P.n`` if that is a module, else ``P``; importing
    ``a.b.c`` runs ``a`` and ``a.b`` first, except the packages the importer is in
    (already running by then).
    """
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_imports(path):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            source = ".".join([*base, node.module] if node.module else base)
        else:
            source = node.module or ""
        for alias in node.names:
            sub = f"{source}.{alias.name}"
            targets.add(sub if sub in _BY_NAME else source)
    found: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            inside = module == name or module.startswith(name + ".")
            if name in _BY_NAME and not inside:
                found.add(name)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle() -> None:
    """No module imports, directly or through others, a module that imports it back.

    A lazy import (in a function) counts too: it breaks a circle at import time but
    not in the design, and the next refactor that hoists it breaks the program.
    Lazy imports are for cost (heavy dependencies, ``helix --help``), never for circles.
    """
    graph = {name: _edges(path) for name, path in _BY_NAME.items()}
    described = [
        " -> ".join(c) + "  [" + "; ".join(f"{m} imports {sorted(graph[m] & set(c))}" for m in c)
        for c in _circles(graph)
    ]
    assert described == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


# -- private modules ------------------------------------------------------------------


def _owner(private_module: str) -> str | None:
    """The package a private module belongs to: the part before its first ``_`` name.

    ``helix.providers._scenario`` belongs to ``helix.providers``; ``helix.gates._builtin._x``
    to ``helix.gates``. Modules with no private part (or only ``helix._util``,
    ``helix._version``, which are shared by every layer) belong to no one.
    """
    parts = private_module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = ".".join(parts[:i])
            return None if owner == "helix" else owner
    return None


def _private_reaches(path: Path, within: str, *, module: str | None = None) -> list[str]:
    """The private modules outside package ``within`` that the file at ``path`` imports.

    ``module`` is the file's own name, to resolve its relative imports; a test file has
    none (its relative imports are the tests' own helpers) and they are skipped.
    """
    package = module or ""
    if module is not None and path.name != "__init__.py":
        package = module.rpartition(".")[0]
    reached: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not (node.level and module is None):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            names = [source, *(f"{source}.{alias.name}" for alias in node.names)]
        for name in names:
            owner = _owner(name) if name.startswith("helix.") else None
            if owner is not None and not (within == owner or within.startswith(owner + ".")):
                reached.append(name)
    return reached


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_no_module_reaches_into_another_packages_private_modules(path: Path) -> None:
    """A package's surface is its ``__init__``; what lies behind it is its own business."""
    module = _module_name(path)
    assert _private_reaches(path, module, module=module) == []


TESTS = Path(__file__).resolve().parent
TEST_FILES = sorted(TESTS.rglob("*.py"))


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_tests_reach_only_into_the_package_they_test(path: Path) -> None:
    """A test may import the private modules of the package it tests, and no others.

    White-box tests of an implementation module (``tests/providers`` of
    ``helix.providers._retry``) are fine: they test it. The package a test file tests
    is named by its folder: ``tests/X/...`` tests ``helix.X`` (``tests/kernel/log``:
    ``helix.kernel.log``, and so on). A test of one package that needs another's
    internals needs that package's public surface instead.
    """
    folders = path.relative_to(TESTS).parent.parts
    tested = ".".join(["helix", *folders]) if folders else "helix"
    reached = _private_reaches(path, tested)
    assert reached == [], f"{path.relative_to(TESTS)} tests {tested}"
