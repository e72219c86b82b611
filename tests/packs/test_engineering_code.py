"""The pack's code tools on their own: search by syntax tree, and libcst refactors."""

from __future__ import annotations

from pathlib import Path

from helix.packs.engineering import TOOLS, rename_in, replace_body
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext

RENAME_SYMBOL = next(t for t in TOOLS if t.name == "rename_symbol")
REPLACE_FUNCTION_BODY = next(t for t in TOOLS if t.name == "replace_function_body")
SEARCH_CODE = next(t for t in TOOLS if t.name == "search_code")

CODE = '''\
"""Shapes."""

LIMIT = 3


class Shape:
    def area(self) -> float:
        return 0.0


def area(shape: Shape) -> float:
    # area is computed by the shape
    return shape.area()


def total(shapes):
    return sum(area(s) for s in shapes)  # "area" in a string stays
'''


def _ctx(world: Path) -> ToolContext:
    return ToolContext(run_id="r", call_id="c", world=world.resolve(), sandbox=ProcessSandbox())


def _world(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(CODE)
    (tmp_path / "pkg" / "use.py").write_text("from pkg.shapes import area\n\nprint(area(None))\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    return tmp_path


async def test_search_finds_definitions_and_references(tmp_path: Path) -> None:
    ctx = _ctx(_world(tmp_path))
    found = await SEARCH_CODE.call(ctx, {"query": "area", "kind": "definitions"})
    assert found.ok
    assert found.output.splitlines() == [
        "pkg/shapes.py:7: [definition] def area(self) -> float:",
        "pkg/shapes.py:11: [definition] def area(shape: Shape) -> float:",
    ]
    method = await SEARCH_CODE.call(ctx, {"query": "Shape.area", "kind": "definitions"})
    assert method.output.splitlines() == ["pkg/shapes.py:7: [definition] def area(self) -> float:"]
    refs = await SEARCH_CODE.call(ctx, {"query": "area", "kind": "references"})
    lines = refs.output.splitlines()
    assert "pkg/shapes.py:13: [reference] return shape.area()" in lines
    assert "pkg/use.py:1: [reference] from pkg.shapes import area" in lines
    assert not any(":12:" in line for line in lines)  # the comment is not a reference
    assert refs.ui is not None
    assert refs.ui.component == "table"
    limit = await SEARCH_CODE.call(ctx, {"query": "LIMIT", "kind": "all"})
    assert limit.output == "pkg/shapes.py:3: [definition] LIMIT = 3"
    text = await SEARCH_CODE.call(ctx, {"query": "is computed", "kind": "text"})
    assert text.output == "pkg/shapes.py:12: [text] # area is computed by the shape"


async def test_search_refuses_bad_queries_and_paths(tmp_path: Path) -> None:
    ctx = _ctx(_world(tmp_path))
    assert not (await SEARCH_CODE.call(ctx, {"query": "a b"})).ok
    outside = await SEARCH_CODE.call(ctx, {"query": "area", "path": "../"})
    assert not outside.ok
    assert "outside the world" in outside.output
    (tmp_path / "link.py").symlink_to("/etc/hostname")
    linked = await SEARCH_CODE.call(ctx, {"query": "localhost", "kind": "text"})
    assert "link.py" not in linked.output


def test_rename_keeps_formatting_strings_and_comments() -> None:
    renamed = rename_in(CODE, "area", "surface")
    assert "def surface(self) -> float:" in renamed
    assert "return shape.surface()" in renamed
    assert "sum(surface(s) for s in shapes)" in renamed
    assert "# area is computed by the shape" in renamed
    assert '"area" in a string stays' in renamed


async def test_rename_symbol_across_files(tmp_path: Path) -> None:
    ctx = _ctx(_world(tmp_path))
    result = await RENAME_SYMBOL.call(ctx, {"old": "area", "new": "surface"})
    assert result.ok, result.output
    assert sorted(f.path for f in result.files) == ["pkg/shapes.py", "pkg/use.py"]
    assert "skipped broken.py (does not parse)" in result.output
    assert (tmp_path / "pkg" / "use.py").read_text().startswith("from pkg.shapes import surface\n")
    again = await RENAME_SYMBOL.call(ctx, {"old": "area", "new": "surface"})
    assert not again.ok
    assert "no identifier 'area'" in again.output
    bad = await RENAME_SYMBOL.call(ctx, {"old": "surface", "new": "class"})
    assert not bad.ok
    assert "not a Python identifier" in bad.output


def test_replace_body_of_a_method() -> None:
    updated, matched = replace_body(CODE, "Shape.area", "return 1.0  # unit")
    assert matched == 1
    assert "    def area(self) -> float:\n        return 1.0  # unit\n" in updated
    assert "return shape.area()" in updated  # the other area is left


async def test_replace_function_body_tool(tmp_path: Path) -> None:
    ctx = _ctx(_world(tmp_path))
    result = await REPLACE_FUNCTION_BODY.call(
        ctx, {"path": "pkg/shapes.py", "function": "total", "body": "return 0\n"}
    )
    assert result.ok, result.output
    (change,) = result.files
    assert change.path == "pkg/shapes.py"
    assert "def total(shapes):\n    return 0\n" in (tmp_path / "pkg" / "shapes.py").read_text()
    both = await REPLACE_FUNCTION_BODY.call(
        ctx, {"path": "pkg/shapes.py", "function": "area", "body": "pass"}
    )
    assert not both.ok
    assert "2 functions match" in both.output
    missing = await REPLACE_FUNCTION_BODY.call(
        ctx, {"path": "pkg/shapes.py", "function": "nope", "body": "pass"}
    )
    assert not missing.ok
    broken = await REPLACE_FUNCTION_BODY.call(
        ctx, {"path": "pkg/shapes.py", "function": "total", "body": "return ("}
    )
    assert not broken.ok
    assert "does not parse" in broken.output
