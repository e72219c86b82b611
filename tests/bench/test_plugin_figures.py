"""The plugin figures, measured for real at a smoke test's sizes."""

from __future__ import annotations

from helix.bench import Figure
from helix.bench._plugins import PluginSizes, plugin_figures


async def test_plugin_figures_are_measured() -> None:
    figures = await plugin_figures(PluginSizes.quick())
    by_name = {f.name: f for f in figures}
    assert set(by_name) == {"plugin_load_ms", "reload_to_serving_ms"}
    assert all(isinstance(f, Figure) and f.suite == "extension" for f in figures)
    assert by_name["plugin_load_ms"].value > 0
    assert by_name["plugin_load_ms"].params["plugins"] >= 2  # the folder's and the example
    assert by_name["reload_to_serving_ms"].value > 0
    assert by_name["reload_to_serving_ms"].params == {"poll_s": 0.02, "reloads": 3}
