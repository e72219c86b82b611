"""Each run in its own worktree (the pack's ``prepare_world``), and ``deliver``'s git kept safe.

Real git throughout: a person's checkout, a bare remote, hooks and a rewritten ``.git``
that must not run anything or redirect the push.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from helix.errors import PluginError
from helix.kernel.log import MemoryEventStore
from helix.packs.engineering import TOOLS, GitError, prepare_world, worktree_of
from helix.plugins import Plugins, WorldRequest
from helix.providers import Scenario, ScriptedModel
from helix.runtime import Blueprint, Engine, RunSetup
from helix.sandbox import ProcessSandbox
from helix.tools import ToolContext

from ._repo import pack_folder, sample_repository, sh_git

DELIVER = next(t for t in TOOLS if t.name == "deliver")

BLUEPRINT = {"model": "scripted:x", "tools": [], "plugins": ["engineering"]}


def _engine(tmp_path: Path, home: Path) -> Engine:
    def model(_setup: RunSetup) -> ScriptedModel:
        return ScriptedModel(Scenario.of({"text": "done"}), label="x")

    env = {"HELIX_PLUGINS": str(pack_folder(tmp_path / "found"))}
    return Engine(
        MemoryEventStore(),
        home=home,
        sandbox=ProcessSandbox(),
        model_factory=model,
        env={},
        plugins=Plugins(home=home, env=env),
    )


async def test_a_world_that_is_no_checkout_is_left_as_it_is(
    tmp_path: Path, helix_home: Path
) -> None:
    engine = _engine(tmp_path, helix_home)
    plain = tmp_path / "plain"
    plain.mkdir()
    blueprint = Blueprint.model_validate(BLUEPRINT)
    record = await engine.create("x", blueprint=blueprint, world=plain)
    assert Path(record.world) == plain.resolve()
    repo, _ = sample_repository(tmp_path / "s")
    (repo / "sub").mkdir()
    inside = await engine.create("x", blueprint=blueprint, world=repo / "sub")
    assert Path(inside.world) == (repo / "sub").resolve()
    assert sh_git("worktree", "list", "--porcelain", cwd=repo).count("worktree ") == 1


async def test_a_repository_without_a_commit_refuses_the_run(
    tmp_path: Path, helix_home: Path
) -> None:
    engine = _engine(tmp_path, helix_home)
    empty = tmp_path / "empty"
    empty.mkdir()
    sh_git("init", "--quiet", cwd=empty)
    blueprint = Blueprint.model_validate(BLUEPRINT)
    refused = "plugin engineering: could not prepare the world: .*no commit"
    with pytest.raises(PluginError, match=refused):
        await engine.create("x", blueprint=blueprint, world=empty)
    assert (await engine.store.list_runs()).runs == []


async def _prepared(
    tmp_path: Path, home: Path, marker: Path | None = None
) -> tuple[Path, Path, Path, str]:
    repo, remote = sample_repository(tmp_path)
    if marker is not None:  # the person's own hooks: none may run for the pack's git
        for name in ("post-checkout", "pre-commit", "post-commit", "pre-push"):
            _hook(repo / ".git", name, marker)
        _hook(repo / ".git", "reference-transaction", marker)
    run_id = "run_0123456789abcdef0123"
    world = await prepare_world(WorldRequest(run_id, repo, home))
    assert world is not None
    return repo, remote, world, run_id


def _hook(repo_git: Path, name: str, marker: Path) -> None:
    hook = repo_git / "hooks" / name
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)


async def test_deliver_runs_no_hook_and_ignores_a_rewritten_git_file(
    tmp_path: Path, helix_home: Path
) -> None:
    marker = tmp_path / "ran"
    repo, remote, world, run_id = await _prepared(tmp_path, helix_home, marker)
    assert not marker.exists()
    assert sh_git("status", "--porcelain", cwd=repo) == ""
    # The agent points the world's .git at a repository of its making: another remote,
    # a file-system monitor that would run a program.
    evil = tmp_path / "evil"
    sh_git("init", "--quiet", "--bare", str(evil), cwd=tmp_path)
    sh_git("init", "--quiet", str(tmp_path / "crafted"), cwd=tmp_path)
    crafted = tmp_path / "crafted" / ".git"
    with (crafted / "config").open("a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}"\n[remote "origin"]\n\turl = {evil}\n')
    (world / ".git").write_text(f"gitdir: {crafted}\n")
    (world / "calc.py").write_text("def add(a, b):\n    return a + b\n")

    ctx = ToolContext(run_id=run_id, call_id="c", world=world, sandbox=ProcessSandbox())
    result = await DELIVER.call(ctx, {"message": "Fix add", "summary": "adds now"})
    assert result.ok, result.output
    assert not marker.exists()
    branch = "helix/0123456789ab"
    assert "Fix add" in sh_git("log", "-1", "--format=%s", branch, cwd=remote)
    assert sh_git("for-each-ref", cwd=evil) == ""
    assert "Tests before: not run" in sh_git("log", "-1", "--format=%B", branch, cwd=remote)
    (effect,) = result.effects
    assert effect.kind == "irreversible"
    assert effect.args["branch"] == branch
    sh_git("commit", "--quiet", "--allow-empty", "-m", "by hand", cwd=repo)
    assert marker.exists()  # the hooks do run for a person's git: the pack's turned them off


async def test_deliver_refuses_what_it_cannot_deliver(tmp_path: Path, helix_home: Path) -> None:
    repo, _, world, run_id = await _prepared(tmp_path, helix_home)
    record = worktree_of(run_id, world)
    assert record is not None
    assert record.repository == str(repo)
    assert worktree_of("run_other", world) is None  # another run's record is no record
    ctx = ToolContext(run_id=run_id, call_id="c", world=world, sandbox=ProcessSandbox())
    nothing = await DELIVER.call(ctx, {"message": "m", "summary": "s"})
    assert not nothing.ok
    assert "nothing to deliver" in nothing.output
    (world / "new.txt").write_text("x\n")
    unknown = await DELIVER.call(ctx, {"message": "m", "summary": "s", "remote": "upstream"})
    assert not unknown.ok
    assert "git remote failed" in unknown.output
    url = await DELIVER.call(ctx, {"message": "m", "summary": "s", "remote": "ext::sh -c x"})
    assert not url.ok
    assert "not a remote's name" in url.output
    two = await DELIVER.call(ctx, {"message": "a\nb", "summary": "s"})
    assert not two.ok
    elsewhere = ToolContext(run_id=run_id, call_id="c", world=repo, sandbox=ProcessSandbox())
    plain = await DELIVER.call(elsewhere, {"message": "m", "summary": "s"})
    assert not plain.ok
    assert "not a worktree the engineering pack made" in plain.output


async def test_a_branch_that_exists_refuses_and_leaves_nothing(
    tmp_path: Path, helix_home: Path
) -> None:
    repo, _ = sample_repository(tmp_path)
    sh_git("branch", "helix/0123456789ab", cwd=repo)
    request = WorldRequest("run_0123456789abcdef0123", repo, helix_home)
    with pytest.raises(GitError, match="already exists"):
        await prepare_world(request)
    assert not (helix_home / "worktrees" / request.run_id).exists()
