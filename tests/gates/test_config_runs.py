"""Configuration attacks run for real: the settings every tier gives commands defuse them.

Each trick fires first on the host, without the settings (the marker file appears, so
the test can fail), then the same command runs under the tier, and the marker must not
appear, whatever the gates would have said.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helix.gates import is_read_only_command
from helix.sandbox import BwrapSandbox, DockerSandbox, ProcessSandbox, Sandbox

from ._support import GIT_ENV
from ._tricks import TRICKS, Plant

CREDENTIAL = "printf 'protocol=https\\nhost=example.test\\n\\n' | git credential fill"
RUNS = [  # the trick, a command it fires on, whether that command then succeeds (None: either)
    ("core.fsmonitor", "git status", True),
    ("core.hooksPath", "git status", True),
    ("hook in .git/hooks", "git status", True),
    ("core.pager", "script -qec 'git log -1' /dev/null", True),
    ("pager.log", "script -qec 'git log -1' /dev/null", True),
    ("gpg.program", "git log -1", True),
    ("gpg.x509.program", "git log -1", True),
    ("gpg.ssh.program", "git log -1", None),  # ssh-keygen may quit before git has written
    ("core.attributesFile", "git diff", True),
    ("core.sshCommand", "git ls-remote ssh://example.invalid/repo", False),
    ("credential.helper", CREDENTIAL, False),
    ("core.askPass", CREDENTIAL, False),
    ("core.editor", "git commit", False),  # no editor: the message stays empty
]


def _sandbox(tier: str, request: pytest.FixtureRequest) -> Sandbox:
    if tier == "bwrap":
        request.getfixturevalue("bwrap_available")
        return BwrapSandbox()
    return ProcessSandbox()


def _on_host(command: str, world: Path, env: dict[str, str]) -> None:
    """Run ``command`` on the host, without the sandbox's settings (the control)."""
    subprocess.run(
        ["/bin/sh", "-c", command], cwd=world, env=env, capture_output=True,
        stdin=subprocess.DEVNULL, start_new_session=True,  # no terminal to prompt on
    )  # fmt: skip


def _touch_tracked(world: Path) -> None:
    """Change an unchanged tracked file's time: ``git status`` then rewrites the index."""
    stamp = (world / "same.txt").stat().st_mtime + 7
    os.utime(world / "same.txt", (stamp, stamp))


@pytest.mark.parametrize("tier", ["process", "bwrap"])
@pytest.mark.parametrize(("trick", "command", "succeeds"), RUNS)
async def test_the_sandbox_defuses_git_configuration(
    plant: Plant,
    trick: str,
    command: str,
    succeeds: bool | None,
    tier: str,
    request: pytest.FixtureRequest,
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
    if succeeds is not None:
        assert (result.exit_code == 0) is succeeds, result.output


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
