"""``search_code``: definitions and references of a Python symbol (by its syntax tree), or text.

A symbol is a name (``add``) or a dotted path (``Calculator.add``): a definition is a
``def``, ``async def`` or ``class`` of that name (nested in the classes and functions
the dots name), or a module- or class-level assignment to it; a reference is any use
of the name (a variable, an attribute ``x.add``, an import). Text search finds lines
holding ``text`` (plain text, case-sensitive). Only ``.py`` files in the world are
read, links are not followed, and virtual environments and caches are skipped.
"""

from __future__ import annotations

import ast
import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from helix.tools import ToolContext, ToolResult, UiPart, tool

from ._files import Declined, in_world, python_files, read_text, relative

Kind = Literal["all", "definitions", "references", "text"]


@dataclass(frozen=True, slots=True)
class Hit:
    """One place found."""

    kind: str
    """``definition``, ``reference`` or ``text``."""
    path: str
    line: int
    code: str


def definitions(tree: ast.AST, symbol: str) -> list[tuple[int, str]]:
    """Where ``symbol`` (a name or dotted path) is defined in ``tree``: (line, what)."""
    parts = symbol.split(".")
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST, trail: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                path = [*trail, child.name]
                if path[-len(parts) :] == parts:
                    kind = "class" if isinstance(child, ast.ClassDef) else "def"
                    found.append((child.lineno, kind))
                walk(child, path)
            elif isinstance(child, ast.Assign | ast.AnnAssign) and isinstance(
                node, ast.Module | ast.ClassDef
            ):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                for target in targets:
                    if isinstance(target, ast.Name) and [*trail, target.id][-len(parts) :] == parts:
                        found.append((child.lineno, "assignment"))
            elif not isinstance(child, ast.expr):
                walk(child, trail)

    walk(tree, [])
    return found


def references(tree: ast.AST, symbol: str) -> list[int]:
    """The lines where the last part of ``symbol`` is used (names, attributes, imports)."""
    name = symbol.rsplit(".", 1)[-1]
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name:
            lines.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == name:
            lines.add(node.end_lineno or node.lineno)
        elif _names(node, name):
            lines.add(getattr(node, "lineno", 0))
    return sorted(lines)


def _names(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is an import of ``name`` or a keyword argument called ``name``."""
    if isinstance(node, ast.alias):
        return name in (node.name.rsplit(".", 1)[-1], node.asname)
    return isinstance(node, ast.keyword) and node.arg == name


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip()[:200] if 0 < number <= len(lines) else ""


def search(world: Path, under: Path, query: str, kind: Kind, limit: int) -> tuple[list[Hit], int]:
    """The hits (at most ``limit``) and how many files were read."""
    hits: list[Hit] = []
    files = 0
    for path in python_files(world, under):
        text = read_text(path)
        if text is None:
            continue
        files += 1
        name = relative(world, path)
        lines = text.splitlines()

        if kind == "text":
            hits += [
                Hit("text", name, n, line.strip()[:200])
                for n, line in enumerate(lines, 1)
                if query in line
            ]
        else:
            try:
                tree = ast.parse(text, filename=name)
            except (SyntaxError, ValueError, RecursionError):
                continue
            defined = definitions(tree, query) if kind in ("all", "definitions") else []
            hits += [Hit("definition", name, n, _line(lines, n)) for n, _ in defined]
            if kind in ("all", "references"):
                at = {n for n, _ in defined}
                hits += [
                    Hit("reference", name, n, _line(lines, n))
                    for n in references(tree, query)
                    if n not in at
                ]
        if len(hits) >= limit:
            break
    return hits[:limit], files


@tool(read_only=True, idempotent=True, effect="none", paths={"path": "read"})
async def search_code(
    ctx: ToolContext, query: str, kind: Kind = "all", path: str = ".", max_results: int = 100
) -> ToolResult:
    """Search the world's Python code: where a symbol is defined and used, or plain text.

    `query` is a symbol (`add`, `Calculator.add`) for kind `all`, `definitions` or
    `references` (found by the syntax tree, not by text: comments and strings do not
    count), or any text for kind `text`. `path` narrows the search to a file or folder.
    Each hit is `file:line: code`.
    """
    if not query.strip():
        return ToolResult(ok=False, output="query is empty: give a symbol or text to find")
    if kind != "text" and not all(p.isidentifier() for p in query.split(".")):
        return ToolResult(
            ok=False, output=f"{query!r} is not a Python name (use kind 'text' for text)"
        )
    limit = max(1, min(max_results, 1000))
    try:
        under = in_world(ctx.world, path)
    except Declined as refusal:
        return ToolResult(ok=False, output=str(refusal))
    if not under.exists():
        return ToolResult(ok=False, output=f"{path}: no such file or folder")
    hits, files = await asyncio.to_thread(search, ctx.world, under, query, kind, limit)
    if not hits:
        return ToolResult(ok=True, output=f"no {kind} match for {query!r} in {files} Python files")
    lines = [f"{h.path}:{h.line}: [{h.kind}] {h.code}" for h in hits]
    more = f"\n(first {limit} shown)" if len(hits) >= limit else ""
    table = UiPart(
        "table",
        {
            "title": f"{kind} matches for {query}",
            "columns": ["kind", "where", "code"],
            "rows": [[h.kind, f"{h.path}:{h.line}", h.code] for h in hits[:200]],
        },
    )
    return ToolResult(ok=True, output="\n".join(lines) + more, ui=table)
