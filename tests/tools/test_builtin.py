"""The built-in tools, on real files in a temporary world and the real process sandbox."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from helix.errors import InvalidToolArgumentsError
from helix.sandbox import ProcessSandbox
from helix.tools import (
    BUILTIN_TOOLS,
    FileChange,
    ToolContext,
    ToolDef,
    ToolResult,
    builtin_registry,
    tool,
)

CONTRACT = {
    "read_file": ({"path"}, {"offset", "limit"}),
    "write_file": ({"path", "content"}, set()),
    "edit_file": ({"path", "old", "new"}, set()),
    "list_files": (set(), {"path", "pattern"}),
    "search_files": ({"pattern"}, {"path"}),
    "run_command": ({"command"}, {"timeout_s", "background"}),  # background: issue 20
    "http_fetch": ({"url"}, {"method", "headers", "body"}),
    "delegate": ({"objective"}, {"blueprint"}),
}
"""Each built-in tool's required and optional arguments, from the public contract."""

TOOLS = {definition.name: definition for definition in BUILTIN_TOOLS}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret outside\n")
    return root.resolve()


@pytest.fixture
def ctx(world: Path) -> Iterator[ToolContext]:
    sandbox = ProcessSandbox()
    yield ToolContext(run_id="run", call_id="call", world=world, sandbox=sandbox)
    sandbox.close()


async def call(ctx: ToolContext, name: str, **args: Any) -> ToolResult:
    return await TOOLS[name].call(ctx, args)


# --- declarations -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_schema_has_exactly_the_contract_arguments(name: str) -> None:
    required, optional = CONTRACT[name]
    schema = TOOLS[name].parameters
    assert schema["type"] == "object"
    assert set(schema["properties"]) == required | optional
    assert set(schema.get("required", [])) == required
    assert schema["additionalProperties"] is False


def test_natures() -> None:
    natures = {t.name: (t.read_only, t.idempotent, t.effect, t.concurrent) for t in BUILTIN_TOOLS}
    assert natures == {
        "read_file": (True, True, "none", True),
        "list_files": (True, True, "none", True),
        "search_files": (True, True, "none", True),
        "write_file": (False, True, "world", False),
        "edit_file": (False, False, "world", False),
        "run_command": (False, False, "world", False),
        "http_fetch": (False, False, "none", False),
        "delegate": (False, True, "world", False),  # re-run finds its child again
        "plan": (False, True, "world", False),  # re-run finds its graph again
        "show_component": (
            True,
            True,
            "none",
            True,
        ),  # Helix's additions: generative UI (docs/ui.md)
        "ask_choice": (True, True, "none", False),  # re-run finds its card again; waits alone
    }


def test_builtin_registry_is_fresh_each_time() -> None:
    first = builtin_registry()
    assert first.names == sorted([*CONTRACT, "plan", "show_component", "ask_choice"])

    @tool(read_only=True, effect="none")
    async def extra(ctx: ToolContext) -> ToolResult:
        """A tool added to one registry only."""
        return ToolResult(ok=True, output="")

    first.register(extra)
    assert "extra" not in builtin_registry()


def test_descriptions_are_written_for_the_model() -> None:
    for definition in BUILTIN_TOOLS:
        assert isinstance(definition, ToolDef)
        assert "ctx" not in definition.description
        assert len(definition.description) > 40


async def test_unknown_arguments_are_refused(ctx: ToolContext) -> None:
    with pytest.raises(InvalidToolArgumentsError, match="read_file"):
        await call(ctx, "read_file", path="a.txt", lines=3)


# --- path confinement ---------------------------------------------------------------


@pytest.fixture
def escapes(world: Path) -> dict[str, str]:
    """Paths that resolve outside the world, by how they get there."""
    (world / "out-link").symlink_to(world.parent / "outside.txt")
    (world / "out-dir").symlink_to(world.parent)
    return {
        "dotdot": "../outside.txt",
        "absolute": str(world.parent / "outside.txt"),
        "symlink": "out-link",
        "symlinked folder": "out-dir/outside.txt",
    }


CONFINED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {}),
    ("write_file", {"content": "overwritten"}),
    ("edit_file", {"old": "secret", "new": "public"}),
    ("list_files", {}),
    ("search_files", {"pattern": "secret"}),
]


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink", "symlinked folder"])
@pytest.mark.parametrize(("name", "extra"), CONFINED_CALLS, ids=[c[0] for c in CONFINED_CALLS])
async def test_paths_outside_the_world_are_refused(
    ctx: ToolContext, world: Path, escapes: dict[str, str], how: str, name: str, extra: Any
) -> None:
    result = await call(ctx, name, path=escapes[how], **extra)
    assert not result.ok
    assert "outside the world" in result.output
    assert "secret outside" not in result.output
    assert (world.parent / "outside.txt").read_text() == "secret outside\n"


async def test_absolute_paths_inside_the_world_work(ctx: ToolContext, world: Path) -> None:
    (world / "a.txt").write_text("hello\n")
    result = await call(ctx, "read_file", path=str(world / "a.txt"))
    assert result == ToolResult(ok=True, output="hello\n")


async def test_symlinks_inside_the_world_are_followed(ctx: ToolContext, world: Path) -> None:
    (world / "real.txt").write_text("real\n")
    (world / "alias.txt").symlink_to("real.txt")
    assert (await call(ctx, "read_file", path="alias.txt")).output == "real\n"
    written = await call(ctx, "write_file", path="alias.txt", content="changed\n")
    assert written.files[0].path == "real.txt"


# --- read_file ----------------------------------------------------------------------


async def test_read_file(ctx: ToolContext, world: Path) -> None:
    (world / "a.txt").write_text("one\ntwo\nthree\n")
    assert await call(ctx, "read_file", path="a.txt") == ToolResult(
        ok=True, output="one\ntwo\nthree\n"
    )


async def test_read_file_offset_and_limit(ctx: ToolContext, world: Path) -> None:
    (world / "a.txt").write_text("".join(f"line {n}\n" for n in range(10)))
    result = await call(ctx, "read_file", path="a.txt", offset=2, limit=3)
    assert result.output == "line 2\nline 3\nline 4\n[5 more lines: continue with offset=5]"
    tail = await call(ctx, "read_file", path="a.txt", offset=8)
    assert tail.output == "line 8\nline 9\n"


async def test_read_file_caps_output(world: Path) -> None:
    (world / "big.txt").write_text("x" * 50 + "\n" + "y" * 100 + "\n" + "z\n")
    small = ToolContext("run", "call", world, ProcessSandbox(), max_output=60)
    result = await TOOLS["read_file"].call(small, {"path": "big.txt"})
    assert result.ok
    assert result.output == (
        "x" * 50 + "\n" + "y" * 9 + "\n[output truncated: 94 more bytes]\n"
        "[2 more lines: continue with offset=1]"
    )


async def test_read_file_refusals(ctx: ToolContext, world: Path) -> None:
    (world / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (world / "folder").mkdir()
    (world / "short.txt").write_text("a\nb\n")
    cases = {
        "image.png": "binary",
        "missing.txt": "no such file",
        "folder": "is a directory",
    }
    for path, message in cases.items():
        result = await call(ctx, "read_file", path=path)
        assert not result.ok
        assert message in result.output
        assert path in result.output
    past = await call(ctx, "read_file", path="short.txt", offset=5)
    assert not past.ok
    assert "past the end" in past.output
    assert "2 lines" in past.output
    assert not (await call(ctx, "read_file", path="short.txt", offset=-1)).ok
    assert not (await call(ctx, "read_file", path="short.txt", limit=0)).ok


async def test_read_empty_file(ctx: ToolContext, world: Path) -> None:
    (world / "empty.txt").write_text("")
    result = await call(ctx, "read_file", path="empty.txt")
    assert result.ok
    assert "empty" in result.output


# --- write_file ---------------------------------------------------------------------


async def test_write_file_creates_with_parents(ctx: ToolContext, world: Path) -> None:
    result = await call(ctx, "write_file", path="src/pkg/new.py", content="print('hi')\n")
    assert result.ok
    assert (world / "src/pkg/new.py").read_text() == "print('hi')\n"
    assert result.files == (
        FileChange(path="src/pkg/new.py", op="create", before=None, after=sha(b"print('hi')\n")),
    )


async def test_write_file_modifies_and_is_idempotent(ctx: ToolContext, world: Path) -> None:
    (world / "a.txt").write_text("old\n")
    result = await call(ctx, "write_file", path="a.txt", content="new\n")
    assert result.files == (
        FileChange(path="a.txt", op="modify", before=sha(b"old\n"), after=sha(b"new\n")),
    )
    again = await call(ctx, "write_file", path="a.txt", content="new\n")
    assert again.ok
    assert again.files == ()  # nothing changed, so nothing to record
    assert "unchanged" in again.output
    assert (world / "a.txt").read_text() == "new\n"


async def test_write_file_refuses_a_folder(ctx: ToolContext, world: Path) -> None:
    (world / "folder").mkdir()
    for path in ("folder", "."):
        result = await call(ctx, "write_file", path=path, content="x")
        assert not result.ok
        assert "directory" in result.output


async def test_write_file_under_a_file_fails_cleanly(ctx: ToolContext, world: Path) -> None:
    (world / "a.txt").write_text("file\n")
    result = await call(ctx, "write_file", path="a.txt/b.txt", content="x")
    assert not result.ok
    assert "a.txt/b.txt" in result.output


# --- edit_file ----------------------------------------------------------------------


async def test_edit_file(ctx: ToolContext, world: Path) -> None:
    before = b"def f():\n    return 1\n"
    (world / "f.py").write_bytes(before)
    result = await call(ctx, "edit_file", path="f.py", old="return 1", new="return 2")
    after = b"def f():\n    return 2\n"
    assert result.ok
    assert "line 2" in result.output
    assert (world / "f.py").read_bytes() == after
    assert result.files == (
        FileChange(path="f.py", op="modify", before=sha(before), after=sha(after)),
    )


async def test_edit_file_needs_a_unique_match(ctx: ToolContext, world: Path) -> None:
    (world / "f.py").write_text("x = 1\nx = 1\nx = 1\n")
    several = await call(ctx, "edit_file", path="f.py", old="x = 1", new="x = 2")
    assert not several.ok
    assert "3 times" in several.output
    none = await call(ctx, "edit_file", path="f.py", old="y = 1", new="y = 2")
    assert not none.ok
    assert "not found" in none.output
    # Overlapping: str.count says 1, but the text fits at two places.
    overlapping = await call(ctx, "edit_file", path="f.py", old="x = 1\nx = 1\n", new="!")
    assert "2 times" in overlapping.output
    assert (world / "f.py").read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_file_refusals(ctx: ToolContext, world: Path) -> None:
    (world / "blob.bin").write_bytes(b"abc\0def")
    (world / "a.txt").write_text("abc\n")
    assert "no such file" in (await call(ctx, "edit_file", path="no.txt", old="a", new="b")).output
    assert "binary" in (await call(ctx, "edit_file", path="blob.bin", old="abc", new="x")).output
    assert "empty" in (await call(ctx, "edit_file", path="a.txt", old="", new="x")).output
    assert "same" in (await call(ctx, "edit_file", path="a.txt", old="abc", new="abc")).output


async def test_edit_file_explains_crlf(ctx: ToolContext, world: Path) -> None:
    (world / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await call(ctx, "edit_file", path="win.txt", old="one\ntwo", new="x")
    assert not result.ok
    assert "CRLF" in result.output


# --- list_files ---------------------------------------------------------------------


def make_tree(world: Path) -> None:
    for name in ("b.py", "a.txt", "src/main.py", "src/util/helpers.py", ".git/HEAD"):
        (world / name).parent.mkdir(parents=True, exist_ok=True)
        (world / name).write_text("x\n")


async def test_list_files(ctx: ToolContext, world: Path) -> None:
    make_tree(world)
    result = await call(ctx, "list_files")
    assert result.ok
    assert result.output.splitlines() == [
        ".git/",
        "a.txt",
        "b.py",
        "src/",
        "src/main.py",
        "src/util/",
        "src/util/helpers.py",
    ]


async def test_list_files_pattern_and_path(ctx: ToolContext, world: Path) -> None:
    make_tree(world)
    python = await call(ctx, "list_files", pattern="*.py")
    assert python.output.splitlines() == ["b.py", "src/main.py", "src/util/helpers.py"]
    nested = await call(ctx, "list_files", path="src", pattern="src/*/*.py")
    assert nested.output.splitlines() == ["src/util/helpers.py"]
    under = await call(ctx, "list_files", path="src/util")
    assert under.output.splitlines() == ["src/util/helpers.py"]
    none = await call(ctx, "list_files", pattern="*.rs")
    assert none.ok
    assert "no files" in none.output


async def test_list_files_is_capped(ctx: ToolContext, world: Path) -> None:
    for n in range(2100):
        (world / f"f{n:04}.txt").write_text("")
    result = await call(ctx, "list_files")
    lines = result.output.splitlines()
    assert len(lines) == 2001
    assert lines[0] == "f0000.txt"
    assert lines[1999] == "f1999.txt"
    assert lines[-1].startswith("[100 more entries not shown")


async def test_list_files_missing_path(ctx: ToolContext) -> None:
    result = await call(ctx, "list_files", path="nowhere")
    assert not result.ok
    assert "nowhere" in result.output


# --- search_files -------------------------------------------------------------------


async def test_search_files(ctx: ToolContext, world: Path) -> None:
    make_tree(world)
    (world / "src/main.py").write_text("import os\n\ndef main():\n    os.exit(0)\n")
    (world / "blob.bin").write_bytes(b"os.exit\0")
    (world / ".git/config").write_text("os.exit\n")
    result = await call(ctx, "search_files", pattern=r"os\.\w+")
    assert result == ToolResult(ok=True, output="src/main.py:4:     os.exit(0)")
    one_file = await call(ctx, "search_files", pattern="^import", path="src/main.py")
    assert one_file.output == "src/main.py:1: import os"


async def test_search_files_skips_symlinks_out(ctx: ToolContext, world: Path) -> None:
    (world / "out-link").symlink_to(world.parent / "outside.txt")
    result = await call(ctx, "search_files", pattern="secret")
    assert result.ok
    assert "no matches" in result.output


async def test_search_files_invalid_regex(ctx: ToolContext) -> None:
    result = await call(ctx, "search_files", pattern="(unclosed")
    assert not result.ok
    assert "invalid regular expression" in result.output
    assert "missing )" in result.output


async def test_search_files_is_capped(ctx: ToolContext, world: Path) -> None:
    (world / "many.txt").write_text("hit\n" * 600)
    result = await call(ctx, "search_files", pattern="hit")
    lines = result.output.splitlines()
    assert lines[0] == "many.txt:1: hit"
    assert lines[499] == "many.txt:500: hit"
    assert lines[500].startswith("[100 more matches not shown")
    small = ToolContext("run", "call", ctx.world, ctx.sandbox, max_output=100)
    capped = await TOOLS["search_files"].call(small, {"pattern": "hit"})
    assert "[output truncated:" in capped.output
    assert capped.output.endswith("narrow pattern or path]")


# --- run_command --------------------------------------------------------------------


async def test_run_command(ctx: ToolContext, world: Path) -> None:
    result = await call(ctx, "run_command", command="pwd; echo hi > made.txt")
    assert result == ToolResult(ok=True, output=f"{world}\n[exit code 0]")
    assert (world / "made.txt").read_text() == "hi\n"
    failed = await call(ctx, "run_command", command="echo oops >&2; exit 4")
    assert failed == ToolResult(ok=False, output="oops\n[exit code 4]")


async def test_run_command_timeout_is_capped_by_the_run(world: Path) -> None:
    quick = ToolContext("run", "call", world, ProcessSandbox(), command_timeout_s=0.3)
    result = await TOOLS["run_command"].call(quick, {"command": "sleep 30", "timeout_s": 500})
    assert not result.ok
    assert "timed out after 0.3s" in result.output


async def test_run_command_own_timeout(ctx: ToolContext) -> None:
    result = await call(ctx, "run_command", command="echo started; sleep 30", timeout_s=0.2)
    assert not result.ok
    assert result.output.startswith("started\n[timed out after 0.2s")
    assert not (await call(ctx, "run_command", command="true", timeout_s=-1)).ok
    assert not (await call(ctx, "run_command", command="  ")).ok


async def test_run_command_truncates_with_a_marker(world: Path) -> None:
    small = ToolContext("run", "call", world, ProcessSandbox(), max_output=100)
    result = await TOOLS["run_command"].call(small, {"command": "seq 1 1000"})
    assert result.ok
    assert result.output.endswith("more bytes]\n[exit code 0]")
    assert "[output truncated: " in result.output


async def test_run_command_environment_is_scrubbed(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-leak-check")
    monkeypatch.setenv("HELIX_DB", "postgresql://user:pw@db/helix")
    monkeypatch.setenv("MY_SECRET", "very-secret-value")
    result = await call(ctx, "run_command", command="env")
    assert result.ok
    for name in ("OPENAI_API_KEY", "HELIX_DB", "MY_SECRET"):
        assert name not in result.output
    for value in ("sk-test-leak-check", "user:pw", "very-secret-value"):
        assert value not in result.output


# --- http_fetch ---------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _answer(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/hello":
            self._answer(200, "héllo\n".encode())
        elif self.path == "/big":
            self._answer(200, b"z" * 5000)
        elif self.path == "/moved":
            self._answer(302, b"", Location="http://elsewhere.invalid/")
        else:
            self._answer(404, b"not here\n")

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        echoed = {
            "body": self.rfile.read(length).decode(),
            "x-test": self.headers["X-Test"],
            "method": self.command,
        }
        self._answer(201, json.dumps(echoed).encode())


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


async def test_http_get(ctx: ToolContext, server: str) -> None:
    result = await call(ctx, "http_fetch", url=f"{server}/hello")
    assert result.ok
    assert result.output.startswith("HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\n")
    assert result.output.endswith("\n\nhéllo\n")


async def test_http_post_with_headers(ctx: ToolContext, server: str) -> None:
    result = await call(
        ctx,
        "http_fetch",
        url=f"{server}/echo",
        method="post",
        headers={"X-Test": "yes"},
        body="payload",
    )
    assert result.ok
    assert result.output.startswith("HTTP 201 Created\n")
    body = result.output.split("\n\n", 1)[1]
    assert json.loads(body) == {"body": "payload", "x-test": "yes", "method": "POST"}


async def test_http_error_status_is_an_answer(ctx: ToolContext, server: str) -> None:
    result = await call(ctx, "http_fetch", url=f"{server}/missing")
    assert not result.ok
    assert result.output.startswith("HTTP 404 Not Found\n")
    assert result.output.endswith("not here\n")


async def test_http_redirects_are_not_followed(ctx: ToolContext, server: str) -> None:
    result = await call(ctx, "http_fetch", url=f"{server}/moved")
    assert result.ok
    assert "HTTP 302 Found" in result.output
    assert "location: http://elsewhere.invalid/" in result.output
    assert "redirect not followed" in result.output


async def test_http_body_is_capped(world: Path, server: str) -> None:
    small = ToolContext("run", "call", world, ProcessSandbox(), max_output=1000)
    result = await TOOLS["http_fetch"].call(small, {"url": f"{server}/big"})
    assert result.output.endswith("z" * 1000 + "\n[output truncated: 4000 more bytes]")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://x", "http://", "/etc/passwd"]
)
async def test_http_refuses_other_schemes(ctx: ToolContext, url: str) -> None:
    result = await call(ctx, "http_fetch", url=url)
    assert not result.ok
    assert "only http and https" in result.output


async def test_http_connection_failure(ctx: ToolContext) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = await call(ctx, "http_fetch", url=f"http://127.0.0.1:{port}/")
    assert not result.ok
    assert "failed" in result.output


async def test_http_invalid_method(ctx: ToolContext, server: str) -> None:
    result = await call(ctx, "http_fetch", url=server, method="GET /x")
    assert not result.ok
    assert "invalid HTTP method" in result.output


async def test_invalid_unicode_content_is_refused(ctx: ToolContext, world: Path) -> None:
    result = await call(ctx, "write_file", path="a.txt", content="bad \ud800")
    assert not result.ok
    assert "not valid Unicode" in result.output
    assert not (world / "a.txt").exists()


async def test_run_command_refuses_nan_timeout(ctx: ToolContext) -> None:
    result = await call(ctx, "run_command", command="true", timeout_s=float("nan"))
    assert not result.ok
