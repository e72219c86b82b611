"""Rigged repositories: tricks that make git run a planted program, as data.

Each ``Trick`` is planted in a real repository (``make_repo``) holding ``tools/evil``,
a program that creates the marker file ``.pwned`` and then behaves like ``cat``.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ._support import GIT_ENV, git


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


def make_plant(repo: Path, outside: Path) -> Plant:
    """``repo`` with ``tools/evil`` and a second, unchanged tracked file ``same.txt``."""
    marker = repo / ".pwned"
    program = repo / "tools" / "evil"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\ntouch {marker}\nexec cat "$@"\n')
    program.chmod(0o755)
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


def _signed_commit(armor: str) -> Callable[[Plant], None]:
    """A commit with a (bogus) signature of the kind ``armor`` names, checked by ``git log``."""

    def setup(p: Plant) -> None:
        head = git(p.world, "rev-parse", "HEAD").strip()
        tree = git(p.world, "rev-parse", "HEAD^{tree}").strip()
        body = (
            f"tree {tree}\nparent {head}\nauthor t <t@t> 1 +0000\ncommitter t <t@t> 1 +0000\n"
            f"gpgsig -----BEGIN {armor}-----\n \n abc\n -----END {armor}-----\n\nsigned\n"
        )
        done = subprocess.run(
            ["git", "hash-object", "-t", "commit", "-w", "--stdin", "--literally"],
            cwd=p.world, env=GIT_ENV, input=body, capture_output=True, text=True, check=True,
        )  # fmt: skip
        git(p.world, "update-ref", "refs/heads/main", done.stdout.strip())

    return setup


def _staged(p: Plant) -> None:
    """A staged change, so ``git commit`` has something to ask a message for."""
    (p.world / "same.txt").write_text("changed\n")
    git(p.world, "add", "same.txt")


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
        setup=_signed_commit("PGP SIGNATURE"),
    ),
    "gpg.x509.program": Trick(
        config=(("log.showSignature", "true"), ("gpg.x509.program", "{program}")),
        setup=_signed_commit("SIGNED MESSAGE"),
    ),
    "gpg.ssh.program": Trick(
        config=(
            ("log.showSignature", "true"),
            ("gpg.ssh.allowedSignersFile", "/dev/null"),
            ("gpg.ssh.program", "{program}"),
        ),
        setup=_signed_commit("SSH SIGNATURE"),
    ),
    "credential.helper": Trick(config=(("credential.helper", "{program}"),)),
    "core.askPass": Trick(config=(("core.askPass", "{program}"),)),
    "core.editor": Trick(
        config=(("user.name", "t"), ("user.email", "t@t"), ("core.editor", "{program}")),
        setup=_staged,
    ),
    "core.attributesFile": Trick(
        config=(("core.attributesFile", "extra.attributes"), ("diff.pretty.textconv", "{program}")),
        files=(("extra.attributes", "* diff=pretty\n"),),
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
