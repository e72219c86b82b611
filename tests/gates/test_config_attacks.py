"""Configuration attacks on read-only commands: making git (or a bare name) run a program.

The world's ``.git`` is the agent's to write, and git runs programs its configuration
names. Each trick here plants ``tools/evil`` (which creates a marker file) in a real
repository. The gates must then stop calling ``git status``, ``git log -p``,
``git diff`` and ``git show`` read-only: they ask. Where a fixed setting of the
sandbox's environment can defuse a trick, the command also runs for real: first on the
host without those settings, to show the trick fires, then under the tier, and the
marker must not appear.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from helix.gates import ApprovalGate, CommandsGate, is_read_only_command
from helix.gates._builtin import _git_repo
from helix.sandbox import BwrapSandbox, DockerSandbox, ProcessSandbox, Sandbox

from ._support import GIT_ENV, git, make_call, make_ctx

COMMANDS = ["git status", "git log -p", "git diff", "git show"]


@dataclass
class Plant:
    world: Path
    program: Path
    marker: Path
    outside: Path

    def apply(self, trick: Trick) -> None:
        """Plant ``trick``: ``{program}`` and ``{outside}`` in its texts are filled in."""
        for key, value in trick.config:
            git(self.world, "config", key, self._fill(value))
        for relative, text in trick.files:
            with (self.world / relative).open("a") as file:
                file.write(self._fill(text))
        if trick.setup is not None:
            trick.setup(self)

    def _fill(self, text: str) -> str:
        return text.format(program=self.program, outside=self.outside)


@dataclass(frozen=True)
class Trick:
    config: tuple[tuple[str, str], ...] = ()
    """``git config KEY VALUE`` run in the world."""
    files: tuple[tuple[str, str], ...] = ()
    """Text appended to a file of the world (made if absent)."""
    setup: Callable[[Plant], None] | None = None


@pytest.fixture
def plant(repo: Path, tmp_path: Path) -> Plant:
    marker = repo / ".pwned"
    program = repo / "tools" / "evil"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\ntouch {marker}\nexec cat "$@"\n')
    program.chmod(0o755)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "same.txt").write_text("unchanged\n")
    git(repo, "add", "same.txt")
    git(repo, "commit", "-q", "-m", "second")
    return Plant(repo, program, marker, outside)


def _hook(folder: Path) -> Callable[[Plant], None]:
    def setup(p: Plant) -> None:
        hooks = p.world / folder
        hooks.mkdir(exist_ok=True)
        shutil.copy(p.program, hooks / "post-index-change")

    return setup


def _signed_commit(p: Plant) -> None:
    """A commit carrying a (bogus) signature, which ``log.showSignature`` has checked."""
    head = git(p.world, "rev-parse", "HEAD").strip()
    tree = git(p.world, "rev-parse", "HEAD^{tree}").strip()
    body = (
        f"tree {tree}\nparent {head}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    done = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
        cwd=p.world, env=GIT_ENV, input=body, capture_output=True, text=True, check=True,
    )  # fmt: skip
    git(p.world, "update-ref", "refs/heads/main", done.stdout.strip())


def _submodule(p: Plant) -> None:
    lib = p.world / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "code.txt").write_text("x\n")
    git(lib, "add", "code.txt")
    git(lib, "commit", "-q", "-m", "lib")
    (lib / ".gitattributes").write_text("* filter=tidy\n")
    git(lib, "config", "filter.tidy.clean", str(p.program))
    git(p.world, "add", "lib")  # a gitlink: git status now looks inside lib


def _move_git(p: Plant) -> Path:
    moved = p.outside / "repo.git"
    (p.world / ".git").rename(moved)
    return moved


def _git_file(p: Plant) -> None:
    (p.world / ".git").write_text(f"gitdir: {_move_git(p)}\n")


def _git_link(p: Plant) -> None:
    (p.world / ".git").symlink_to(_move_git(p))


def _config_link(p: Plant) -> None:
    config = p.world / ".git" / "config"
    config.rename(p.outside / "config")
    config.symlink_to(p.outside / "config")


def _no_git(p: Plant) -> None:
    shutil.rmtree(p.world / ".git")


def _no_head(p: Plant) -> None:
    (p.world / ".git" / "HEAD").unlink()


FILTER = (".gitattributes", "* filter=tidy\n")
DIFF = (".gitattributes", "* diff=pretty\n")
EXTRA = ("extra.cfg", '[diff "pretty"]\n\ttextconv = {program}\n')

TRICKS: dict[str, Trick] = {
    "core.fsmonitor": Trick(config=(("core.fsmonitor", "{program}"),)),
    "core.hooksPath": Trick(config=(("core.hooksPath", "hk"),), setup=_hook(Path("hk"))),
    "hook in .git/hooks": Trick(setup=_hook(Path(".git/hooks"))),
    "core.pager": Trick(config=(("core.pager", "{program}"),)),
    "pager.log": Trick(config=(("pager.log", "{program}"),)),
    "diff.external": Trick(config=(("diff.external", "{program}"),)),
    "core.sshCommand": Trick(config=(("core.sshCommand", "{program}"),)),
    "shell alias": Trick(config=(("alias.st", "!{program}"),)),
    "filter driver": Trick(config=(("filter.tidy.clean", "{program}"),), files=(FILTER,)),
    "textconv driver": Trick(config=(("diff.pretty.textconv", "{program}"),), files=(DIFF,)),
    "diff driver command": Trick(config=(("diff.pretty.command", "{program}"),), files=(DIFF,)),
    "attributes in .git/info": Trick(
        config=(("diff.pretty.textconv", "{program}"),),
        files=((".git/info/attributes", "* diff=pretty\n"),),
    ),
    "gpg.program": Trick(
        config=(("log.showSignature", "true"), ("gpg.program", "{program}")),
        setup=_signed_commit,
    ),
    "include.path": Trick(config=(("include.path", "../extra.cfg"),), files=(EXTRA,)),
    "includeIf": Trick(config=(("includeIf.gitdir:/.path", "../extra.cfg"),), files=(EXTRA,)),
    "key on the section line": Trick(
        files=(DIFF, (".git/config", '[diff "pretty"] textconv = {program}\n'))
    ),
    "key after a commented backslash": Trick(
        files=(DIFF, (".git/config", '[diff "pretty"]\n\tnote = x ; \\\n\ttextconv = {program}\n'))
    ),
    "config.worktree": Trick(
        config=(("core.repositoryFormatVersion", "1"), ("extensions.worktreeConfig", "true")),
        files=(FILTER, (".git/config.worktree", '[filter "tidy"]\n\tclean = {program}\n')),
    ),
    "submodule with its own driver": Trick(setup=_submodule),
    "core.worktree": Trick(config=(("core.worktree", "{outside}"),)),
    ".git file": Trick(setup=_git_file),
    ".git link": Trick(setup=_git_link),
    ".git/config link": Trick(setup=_config_link),
    ".git/commondir": Trick(files=((".git/commondir", "{outside}\n"),)),
    "no .git": Trick(setup=_no_git),
    ".git without HEAD": Trick(setup=_no_head),
}


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


# For real: the settings every tier gives commands defuse these, whatever the gates said.

RUNS = [
    ("core.fsmonitor", "git status"),
    ("core.hooksPath", "git status"),
    ("hook in .git/hooks", "git status"),
    ("core.pager", "script -qec 'git log -1' /dev/null"),
    ("pager.log", "script -qec 'git log -1' /dev/null"),
    ("gpg.program", "git log -1"),
    ("core.sshCommand", "git ls-remote ssh://example.invalid/repo"),
]


def _sandbox(tier: str, request: pytest.FixtureRequest) -> Sandbox:
    if tier == "bwrap":
        request.getfixturevalue("bwrap_available")
        return BwrapSandbox()
    return ProcessSandbox()


def _on_host(command: str, world: Path, env: dict[str, str]) -> None:
    """Run ``command`` on the host, without the sandbox's settings (the control)."""
    subprocess.run(["/bin/sh", "-c", command], cwd=world, env=env, capture_output=True)


def _touch_tracked(world: Path) -> None:
    """Change an unchanged tracked file's time: ``git status`` then rewrites the index."""
    stamp = (world / "same.txt").stat().st_mtime + 7
    os.utime(world / "same.txt", (stamp, stamp))


@pytest.mark.parametrize("tier", ["process", "bwrap"])
@pytest.mark.parametrize(("trick", "command"), RUNS)
async def test_the_sandbox_defuses_git_configuration(
    plant: Plant, trick: str, command: str, tier: str, request: pytest.FixtureRequest
) -> None:
    sandbox = _sandbox(tier, request)
    plant.apply(TRICKS[trick])
    _touch_tracked(plant.world)
    _on_host(command, plant.world, GIT_ENV)
    assert plant.marker.exists(), "the trick does not fire on the host: the test proves nothing"
    plant.marker.unlink()
    _touch_tracked(plant.world)
    result = await sandbox.run(command, cwd=plant.world, timeout_s=60)
    assert not plant.marker.exists(), result.output
    if command != "git ls-remote ssh://example.invalid/repo":
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize("tier", ["process", "bwrap"])
async def test_a_bare_name_never_runs_the_worlds_program(
    plant: Plant, tier: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = _sandbox(tier, request)
    shutil.copy(plant.program, plant.world / "ls")
    path = f".{os.pathsep}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    monkeypatch.setenv("PATH", path)
    _on_host("ls", plant.world, {"PATH": path})
    assert plant.marker.exists(), "the planted ls does not run on the host: the test proves nothing"
    plant.marker.unlink()
    assert is_read_only_command("ls", plant.world)
    result = await sandbox.run("ls", cwd=plant.world, timeout_s=60)
    assert not plant.marker.exists(), result.output
    assert "notes.txt" in result.output


def test_the_docker_tier_gives_the_container_the_git_settings(tmp_path: Path) -> None:
    argv = DockerSandbox(user="1000:1000").argv("git status", tmp_path, name="t")
    settings = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--env"}
    assert {"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_PAGER=cat"} <= settings
    assert {"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false"} <= settings
    assert argv.index("--env") < argv.index("--hostname")


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
