"""Refactors through ``libcst`` (the ``engineering`` extra): the code's formatting is kept.

``rename_symbol`` renames an identifier in every Python file under a path: its
definitions (``def``, ``class``, assignments, parameters), its uses, attributes of that
name, imports and keyword arguments; strings and comments are left as they are.
``replace_function_body`` replaces one function's body (``name`` or ``Class.method``).
A file that does not parse is left untouched, and said so; each changed file is
written whole (a new file renamed over it) and reported with its hashes.
"""

from __future__ import annotations

import asyncio
import keyword
import textwrap
from collections.abc import Callable
from pathlib import Path

from helix.tools import FileChange, ToolContext, ToolResult, tool

from ._files import Declined, in_world, python_files, read_text, relative, replace_text, sha256

_MISSING = "refactors need libcst, which is not installed: pip install 'helix-harness[engineering]'"


def _libcst() -> None:
    """``Declined`` saying how to install libcst, when it is not installed."""
    try:
        import libcst  # noqa: F401
    except ImportError:
        raise Declined(_MISSING) from None


def rename_in(source: str, old: str, new: str) -> str:
    """``source`` with every identifier ``old`` renamed ``new`` (``libcst`` errors go up)."""
    _libcst()
    import libcst as cst

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
            if updated_node.value == old:
                return updated_node.with_changes(value=new)
            return updated_node

    return cst.parse_module(source).visit(Rename()).code


def _check_name(name: str, what: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise Declined(f"{what} {name!r} is not a Python identifier")


def _apply(
    world: Path, under: Path, change: Callable[[str], str]
) -> tuple[list[FileChange], list[str]]:
    """Apply ``change`` to each Python file under ``under``; the changes and what was skipped."""
    _libcst()
    import libcst as cst

    changes: list[FileChange] = []
    skipped: list[str] = []
    for path in python_files(world, under):
        text = read_text(path)
        name = relative(world, path)
        if text is None:
            continue
        try:
            updated = change(text)
        except cst.ParserSyntaxError:
            skipped.append(f"{name} (does not parse)")
            continue
        if updated == text:
            continue
        if path.lstat().st_nlink > 1:
            skipped.append(f"{name} (has other hard links)")
            continue
        replace_text(path, updated)
        changes.append(FileChange(name, "modify", sha256(text), sha256(updated)))
    return changes, skipped


def _rename(world: Path, old: str, new: str, path: str) -> ToolResult:
    _check_name(old, "old")
    _check_name(new, "new")
    if old == new:
        raise Declined("old and new are the same name")
    under = in_world(world, path)
    if not under.exists():
        raise Declined(f"{path}: no such file or folder")
    changes, skipped = _apply(world, under, lambda text: rename_in(text, old, new))
    if not changes:
        note = f"; skipped: {', '.join(skipped)}" if skipped else ""
        raise Declined(f"no identifier {old!r} in the Python files under {path}{note}")
    lines = [f"renamed {old} to {new} in {len(changes)} files:"]
    lines += [f"  {c.path}" for c in changes]
    lines += [f"skipped {s}" for s in skipped]
    return ToolResult(ok=True, output="\n".join(lines), files=tuple(changes))


@tool(effect="world", reports_changes=True, paths={"path": "write"})
async def rename_symbol(ctx: ToolContext, old: str, new: str, path: str = ".") -> ToolResult:
    """Rename a Python identifier across the files under `path` (default: the whole world).

    Renames definitions, parameters, uses, attributes, imports and keyword arguments
    spelled `old` (a single name, not dotted); strings and comments are left alone.
    Formatting is kept. Check the result with `search_code` and the tests.
    """
    return await _guarded(lambda: _rename(ctx.world, old, new, path))


def replace_body(source: str, function: str, body: str) -> tuple[str, int]:
    """``source`` with ``function``'s body replaced by ``body``; and how many matched."""
    _libcst()
    import libcst as cst

    parts = function.split(".")
    statements = cst.parse_module(textwrap.dedent(body).strip("\n") + "\n").body
    if not statements:
        raise Declined("body is empty: give at least one statement (`pass`)")
    matched = 0

    class Replace(cst.CSTTransformer):
        def __init__(self) -> None:
            super().__init__()
            self.trail: list[str] = []

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            self.trail.append(node.name.value)
            return True

        def leave_ClassDef(
            self, original_node: cst.ClassDef, updated_node: cst.ClassDef
        ) -> cst.ClassDef:
            self.trail.pop()
            return updated_node

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.trail.append(node.name.value)
            return True

        def leave_FunctionDef(
            self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
        ) -> cst.FunctionDef:
            nonlocal matched
            path = list(self.trail)
            self.trail.pop()
            if len(path) < len(parts) or path[-len(parts) :] != parts:
                return updated_node
            matched += 1
            return updated_node.with_changes(body=cst.IndentedBlock(body=statements))

    return cst.parse_module(source).visit(Replace()).code, matched


def _replace(world: Path, path: str, function: str, body: str) -> ToolResult:
    if not all(p.isidentifier() for p in function.split(".")):
        raise Declined(f"{function!r} is not a function name (`name` or `Class.method`)")
    target = in_world(world, path)
    text = read_text(target)
    if text is None:
        raise Declined(f"{path}: not a readable Python file in the world")
    _libcst()
    import libcst as cst

    try:
        updated, matched = replace_body(text, function, body)
    except cst.ParserSyntaxError as error:
        raise Declined(f"the file or the new body does not parse: {error}") from None
    if matched == 0:
        raise Declined(f"no function {function} in {path}")
    if matched > 1:
        raise Declined(f"{matched} functions match {function} in {path}: name its class")
    if target.lstat().st_nlink > 1:
        raise Declined(f"{path} has other hard links: it may be a file outside the world")
    name = relative(world, target)
    if updated == text:
        return ToolResult(ok=True, output=f"{name}: {function} already has that body")
    replace_text(target, updated)
    change = FileChange(name, "modify", sha256(text), sha256(updated))
    return ToolResult(ok=True, output=f"replaced the body of {function} in {name}", files=(change,))


@tool(idempotent=True, effect="world", reports_changes=True, paths={"path": "write"})
async def replace_function_body(
    ctx: ToolContext, path: str, function: str, body: str
) -> ToolResult:
    """Replace the body of a function (`name`, or `Class.method`) in the Python file at `path`.

    `body` is the new body's code, without the `def` line, indented or not (include
    the docstring if it should stay). The rest of the file is kept as it is.
    """
    return await _guarded(lambda: _replace(ctx.world, path, function, body))


async def _guarded(work: Callable[[], ToolResult]) -> ToolResult:
    try:
        return await asyncio.to_thread(work)
    except Declined as refusal:
        return ToolResult(ok=False, output=str(refusal))
    except OSError as error:
        return ToolResult(ok=False, output=f"cannot change the file: {error.strerror or error}")
    except (ValueError, RecursionError) as error:
        return ToolResult(ok=False, output=f"cannot refactor: {error}")
