"""The example plugin on its own: its declaration keeps Helix's contract.

Each part (tool, gate, component) does what it says.
"""

from __future__ import annotations

from pathlib import Path

from helix_plugin_example import NoSecretsGate, count_words, plugin, render_counts

from helix.gates import GateCall, GateContext, Policy
from helix.plugins import GROUP, check_plugin
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext


def test_the_declaration_keeps_the_contract() -> None:
    assert check_plugin(plugin, expected="example", helix_version="0.1.0") is plugin
    assert plugin.summary()["tools"] == ["count_words"]
    assert GROUP == "helix.plugins"


async def test_count_words_reads_a_file_of_the_world(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one two\nthree\n")
    world = tmp_path.resolve()  # noqa: ASYNC240 - a test's own folder
    ctx = ToolContext(run_id="r", call_id="c", world=world, sandbox=ProcessSandbox())
    result = await count_words.call(ctx, {"path": "notes.txt"})
    assert result.ok
    assert result.output == "notes.txt: 2 lines, 3 words, 14 characters"
    outside = await count_words.call(ctx, {"path": "../x"})
    assert not outside.ok
    assert count_words.facets.read_only
    assert dict(count_words.facets.paths) == {"path": "read"}


async def test_the_gate_refuses_key_shaped_arguments(tmp_path: Path) -> None:
    gate = NoSecretsGate()
    ctx = GateContext(run_id="r", world=tmp_path, policy=Policy())
    leak = GateCall("c", "count_words", {"path": "sk-" + "a" * 24}, count_words)
    fine = GateCall("c", "count_words", {"path": "notes.txt"}, count_words)
    assert (await gate(leak, ctx)).verdict == "deny"
    assert (await gate(fine, ctx)).verdict == "allow"


def test_the_component_renders_as_text() -> None:
    (component,) = plugin.components
    assert component.name == "example.counts"
    assert component.schema["required"] == ["path", "lines", "words"]
    assert render_counts({"path": "a", "lines": 1, "words": 2}) == "a: 1 lines, 2 words"
