"""The installed example plugin's tools pass the conformance suite every tool source
passes, opened through the ``PluginSource`` a run gets them from."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.plugins import Plugins, PluginSource
from helix.testing.conformance import ToolConformance, ToolSample


def _text(world: Path) -> None:
    (world / "notes.txt").write_text("one two three\nfour\n")


class TestExamplePlugin(ToolConformance):
    samples = {
        "count_words": ToolSample(
            args={"path": "notes.txt"},
            failing={"path": "missing.txt"},
            prepare=_text,
        ),
    }

    @pytest.fixture
    def tool_source(self, tmp_path: Path) -> PluginSource:
        plugins = Plugins(home=tmp_path / "home", env={})
        return PluginSource(plugins, "example")
