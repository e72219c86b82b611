"""The dashboard's plugins page: each plugin, its state (and why not active), what it
provides, as GET /plugins says; readable on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from helix.testing import MockModelServer

from .conftest import (
    DESKTOP,
    PHONE,
    WIDER_THAN_SCREEN,
    Admin,
    LiveServer,
    make_config,
    open_dashboard,
)

NEEDY = """\
from helix.plugins import Plugin

plugin = Plugin(name="needy", version="0.3", requires=("store.vectors",))
"""


@pytest.fixture
def server(tmp_path: Path, model_server: MockModelServer) -> Iterator[LiveServer]:
    folder = tmp_path / "plugins" / "needy"
    folder.mkdir(parents=True)
    (folder / "plugin.py").write_text(NEEDY)
    config = make_config(tmp_path, model_server)
    env = {**(config.env or {}), "HELIX_PLUGINS": str(tmp_path / "plugins")}
    live = LiveServer(make_config(tmp_path, model_server, env=env)).start()
    try:
        yield live
    finally:
        live.stop()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_plugins_page_shows_each_plugin_and_why_one_is_inactive(
    server: LiveServer, browser: Browser, viewport: dict[str, int]
) -> None:
    Admin(server.config.db_url).user("dana", password="dashboard-pw")
    token = server.login("dana", "dashboard-pw")
    page = open_dashboard(browser, server.url, token, viewport)
    page.get_by_test_id("nav-plugins").click()

    example = page.locator("[data-testid=plugin][data-name=example]")
    expect(example.get_by_test_id("plugin-status")).to_have_text("active")
    expect(example.get_by_test_id("plugin-provides")).to_have_text(
        "tools: count_words · gates: example.no-secrets · components: example.counts"
    )
    needy = page.locator("[data-testid=plugin][data-name=needy]")
    expect(needy.get_by_test_id("plugin-status")).to_have_text("inactive")
    expect(needy.get_by_test_id("plugin-reason")).to_have_text(
        "needs store.vectors, which no plugin provides"
    )
    assert page.evaluate(WIDER_THAN_SCREEN) == []
    page.context.close()
