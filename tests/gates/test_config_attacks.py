"""Configuration attacks on read-only commands: the gates stop trusting git.

The world's ``.git`` is the agent's to write, and git runs programs its configuration
names. Each trick of ``_tricks.TRICKS`` is planted in a real repository; the gates
must then stop calling ``git status``, ``git log -p``, ``git diff`` and ``git show``
read-only: they ask, and say why. ``test_config_runs.py`` runs the tricks that the
sandbox's settings defuse for real.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.gates import ApprovalGate, CommandsGate, is_read_only_command
from helix.gates._builtin import _git_repo

from ._support import git, make_call, make_ctx
from ._tricks import TRICKS, Plant

COMMANDS = ["git status", "git log -p", "git diff", "git show"]


@pytest.mark.parametrize("trick", TRICKS)
async def test_git_in_a_rigged_world_asks(plant: Plant, trick: str) -> None:
    for command in COMMANDS:
        assert is_read_only_command(command, plant.world), command
    plant.apply(TRICKS[trick])
    for command in COMMANDS:
        assert not is_read_only_command(command, plant.world), command
    call, ctx = make_call("run_command", command="git status"), make_ctx(plant.world)
    approval = await ApprovalGate()(call, ctx)
    assert approval.verdict == "ask"
    assert approval.reason.startswith("the command may change things (")
    commands = await CommandsGate()(call, ctx)
    assert commands.reason.endswith(": the command may change the world")


async def test_the_reason_names_what_git_would_run(plant: Plant) -> None:
    plant.apply(TRICKS["filter driver"])
    decision = await ApprovalGate()(
        make_call("run_command", command="git diff"), make_ctx(plant.world)
    )
    assert decision.reason == (
        "the command may change things (.git/config sets filter.tidy.clean, which can make "
        "git run a program): git diff"
    )


def test_git_without_a_world_is_not_read_only(repo: Path) -> None:
    assert is_read_only_command("git status", repo)
    assert not is_read_only_command("git status")
    assert is_read_only_command("ls")


def test_a_world_too_big_to_search_is_not_vouched_for(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_git_repo, "MAX_DIRECTORIES", 5)
    for number in range(3):
        (repo / f"d{number}").mkdir()
    assert is_read_only_command("git status", repo)
    for number in range(3, 6):
        (repo / f"d{number}").mkdir()
    assert not is_read_only_command("git status", repo)


def test_the_check_follows_no_link_out_of_the_world(plant: Plant) -> None:
    """A link to a rigged repository outside is not searched (git treats it as a file)."""
    elsewhere = plant.outside / "rigged"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    git(elsewhere, "config", "core.fsmonitor", str(plant.program))
    (plant.world / "lib").symlink_to(elsewhere)
    (plant.world / "dot-git").symlink_to(elsewhere / ".git")
    assert is_read_only_command("git status", plant.world)
    (plant.world / "nested").mkdir()
    (plant.world / "nested" / ".git").symlink_to(elsewhere / ".git")
    assert not is_read_only_command("git status", plant.world)
