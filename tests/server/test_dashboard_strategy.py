"""The run page of a tree-of-thoughts run: its branches, their scores, the one kept (Chromium)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from helix.kernel.log import open_store
from helix.runtime import Blueprint, Engine
from helix.sandbox import ProcessSandbox

from .conftest import DESKTOP, PHONE, WIDER_THAN_SCREEN, Admin, LiveServer, open_dashboard
from .test_dashboard import ARTIFACTS


def _model(path: Path, answer: str) -> str:
    write = {"name": "write_file", "args": {"path": "answer.txt", "content": f"{answer}\n"}}
    steps = [{"text": "Writing.", "tool_calls": [write]}, {"text": f"Answered {answer}."}]
    path.write_text(json.dumps({"steps": steps}))
    return f"scripted:{path}"


def _tree_run(live: LiveServer, tmp_path: Path) -> tuple[str, list[str]]:
    """A tree-of-thoughts run driven to its end on the server's store: (its id, branch ids)."""
    models = [_model(tmp_path / f"m{i}.json", a) for i, a in enumerate(["41", "42", "43"])]
    blueprint = Blueprint.parse(
        {
            "model": models[0],
            "strategy": {
                "kind": "tree_of_thoughts",
                "models": models,
                "judge": {"command": "grep -qx 42 answer.txt"},
            },
        },
        source="tot.yaml",
    )
    world = tmp_path / "world"
    world.mkdir()

    async def main() -> tuple[str, list[str]]:
        store = await open_store(live.config.db_url)
        try:
            engine = Engine(store, home=live.config.home, sandbox=ProcessSandbox(), env={})
            run = await engine.create("six times seven", blueprint=blueprint, world=world)
            state = await engine.drive(run.id)
            assert state.status == "completed"
            assert state.strategy is not None
            return run.id, [b.run_id for b in state.strategy.branches]
        finally:
            await store.close()

    with ThreadPoolExecutor(1) as worker:  # Playwright keeps a loop running in this thread
        return worker.submit(asyncio.run, main()).result()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_run_page_shows_the_branches_their_scores_and_the_one_kept(
    live: LiveServer, admin: Admin, browser: Browser, tmp_path: Path, viewport: dict[str, int]
) -> None:
    admin.user("tess", password="dashboard-pw", workspace="default", role="member")
    token = live.login("tess", "dashboard-pw")
    run_id, branches = _tree_run(live, tmp_path)
    page = open_dashboard(browser, live.url, token, viewport)
    expect(page.get_by_role("heading", name="New run")).to_be_visible()  # the app is up
    page.goto(f"{live.url}/#/runs/{run_id}")

    card = page.get_by_test_id("branches")
    expect(card).to_be_visible()
    expect(card.get_by_test_id("branches-about")).to_have_text(
        "Tree of thoughts: 3 branches from turn 0, judged by command: grep -qx 42 answer.txt."
    )
    rows = card.get_by_test_id("branch")
    expect(rows).to_have_count(3)
    for branch, score in zip(branches, ["score 0", "score 1", "score 0"], strict=True):
        row = card.locator(f"[data-testid=branch][data-run={branch}]")
        expect(row.get_by_test_id("branch-score")).to_have_text(score)
        expect(row).to_contain_text("completed")
    kept = card.locator("[data-kept=true]")
    expect(kept).to_have_count(1)
    expect(kept).to_have_attribute("data-run", branches[1])
    expect(kept.get_by_test_id("branch-kept")).to_have_text("kept")
    expect(card.get_by_test_id("branches-chosen")).to_have_text(
        f"Kept {branches[1]}: the best score of 3 branches (1)."
    )
    expect(page.get_by_test_id("outcome")).to_contain_text(f"kept branch {branches[1]}")
    notes = page.get_by_test_id("note")  # the conversation tells the same steps
    expect(notes.filter(has_text="branched 3 ways at turn 0")).to_have_count(1)
    expect(notes.filter(has_text=f"branch {branches[1]} completed: score 1")).to_have_count(1)
    expect(notes.filter(has_text=f"kept branch {branches[1]}: the best score")).to_have_count(1)
    assert page.evaluate(WIDER_THAN_SCREEN) == []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = "phone" if viewport is PHONE else "desktop"
    card.screenshot(path=str(ARTIFACTS / f"tree-of-thoughts-{name}.png"))

    kept.get_by_role("link", name=branches[1]).click()  # the branch's own page
    expect(page.get_by_role("heading", level=1)).to_have_text("six times seven")
    expect(page.get_by_test_id("branches")).to_be_hidden()  # a branch is a plain run
    assert page.url.endswith(f"#/runs/{branches[1]}")
    page.context.close()
