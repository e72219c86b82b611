"""The dashboard's Memory page in Chromium: add, search, edit and delete memories in both
scopes, upload, download and delete artifacts; a viewer's write shows the server's reason;
readable on a phone."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from .conftest import DESKTOP, PHONE, WIDER_THAN_SCREEN, Admin, LiveServer, open_dashboard

PW = "dashboard-pw"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_memory_page(
    live: LiveServer, admin: Admin, browser: Browser, viewport: dict[str, int], tmp_path: Path
) -> None:
    admin.workspace("team")
    admin.user("ann", password=PW, workspace="team", role="member")
    admin.user("vic", password=PW, workspace="team", role="viewer")
    with live.client(live.login("vic", PW)) as vic:
        own = vic.post("/workspaces/team/memory", json={"text": "vic's private note"})
        assert own.status_code == 201, own.text

    page = open_dashboard(browser, live.url, live.login("ann", PW), viewport)
    page.get_by_test_id("nav-memory").click()
    page.get_by_test_id("memory-workspace").select_option("team")
    expect(page.locator("[data-testid=memory-page][data-workspace=team]")).to_be_visible()
    expect(page.get_by_test_id("no-memories")).to_be_visible()

    page.get_by_test_id("memory-new-text").fill("Deploys go out on Tuesdays")
    page.get_by_test_id("memory-new-scope").select_option("workspace")
    page.get_by_test_id("memory-new-tags").fill("deploy, ops")
    page.get_by_test_id("memory-add").click()
    expect(page.get_by_test_id("memory-notice")).to_have_text("Remembered.")
    page.get_by_test_id("memory-new-text").fill("I like <b>tea</b>")
    page.get_by_test_id("memory-add").click()  # personal, the default
    cards = page.get_by_test_id("memory")
    expect(cards).to_have_count(2)
    expect(page.get_by_text("vic's private note")).to_have_count(0)  # never another's
    expect(page.locator("b")).to_have_count(0)  # text, never markup

    page.get_by_test_id("memory-search").fill('tuesdays "deploy')
    page.get_by_test_id("memory-search").press("Enter")
    expect(cards).to_have_count(1)
    expect(cards.first.get_by_test_id("memory-text")).to_have_text("Deploys go out on Tuesdays")
    cards.first.get_by_test_id("memory-edit").click()
    page.get_by_test_id("memory-edit-text").fill("Deploys go out on Wednesdays")
    page.get_by_test_id("memory-save").click()
    expect(page.get_by_test_id("memory-notice")).to_have_text("Saved.")
    expect(page.get_by_test_id("no-memories")).to_have_text("Nothing matches.")  # re-indexed
    page.get_by_test_id("memory-search").fill("")
    page.get_by_test_id("memory-search").press("Enter")
    expect(cards).to_have_count(2)

    page.get_by_test_id("memory-scope").select_option("personal")
    expect(page.locator("[data-testid=memory-page][data-scope=personal]")).to_be_visible()
    expect(cards).to_have_count(1)
    expect(cards.first.get_by_test_id("memory-text")).to_have_text("I like <b>tea</b>")
    cards.first.get_by_test_id("memory-delete").click()
    cards.first.get_by_test_id("memory-delete").click()  # the second click confirms
    expect(page.get_by_test_id("memory-notice")).to_have_text("Deleted.")
    expect(page.get_by_test_id("no-memories")).to_be_visible()

    page.get_by_test_id("memory-scope").select_option("")
    expect(page.locator("[data-testid=memory-page][data-scope=both]")).to_be_visible()
    upload = tmp_path / "plan.md"
    upload.write_text("# the plan\n")
    page.get_by_test_id("artifact-file").set_input_files(str(upload))
    page.get_by_test_id("artifact-scope").select_option("workspace")
    page.get_by_test_id("artifact-upload").click()
    artifact = page.locator("[data-testid=artifact][data-name='plan.md']")
    expect(artifact).to_contain_text("workspace · v1 · 11 bytes · text/markdown")
    with page.expect_download() as downloaded:
        artifact.get_by_test_id("artifact-download").click()
    saved = tmp_path / "got.md"
    downloaded.value.save_as(saved)
    assert saved.read_text() == "# the plan\n"
    assert page.evaluate(WIDER_THAN_SCREEN) == []
    page.context.close()

    viewer = open_dashboard(browser, live.url, live.login("vic", PW), viewport)
    viewer.get_by_test_id("nav-memory").click()
    viewer.get_by_test_id("memory-workspace").select_option("team")
    expect(viewer.locator("[data-testid=memory-page][data-workspace=team]")).to_be_visible()
    expect(viewer.get_by_test_id("memory")).to_have_count(2)  # the team's, and vic's own
    expect(viewer.get_by_text("Deploys go out on Wednesdays")).to_be_visible()
    viewer.get_by_test_id("memory-new-text").fill("a viewer writes")
    viewer.get_by_test_id("memory-new-scope").select_option("workspace")
    viewer.get_by_test_id("memory-add").click()
    expect(viewer.get_by_test_id("memory-add-error")).to_contain_text("viewer")
    viewer.locator("[data-testid=artifact][data-name='plan.md']").get_by_test_id(
        "artifact-delete"
    ).click()
    expect(viewer.locator("[data-testid=artifact] .error")).to_contain_text("viewer")
    viewer.context.close()
