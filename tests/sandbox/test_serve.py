"""``Sandbox.serve``: a long-lived program with pipes, confined as a command is, and ended whole."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import BwrapSandbox, DockerSandbox, ProcessSandbox, Sandbox
from helix.testing import processes_mentioning, wait_gone_now

# Echoes each line back with the value of $GIVEN and the working folder; leaves a child
# behind (the sleep) so that stopping must end the whole group.
PROGRAM = (
    'sleep 300 & while read line; do echo "$line $GIVEN $(pwd) ${{SECRET_FROM_HOST:-none}}";'
    " done; echo bye >&2; exit 4; : {marker}"
)


async def _exchange(box: Sandbox, world: Path) -> tuple[str, int | None, str]:
    marker = f"helix-serve-{uuid.uuid4().hex}"
    serving = box.serve(
        ["/bin/sh", "-c", PROGRAM.format(marker=marker)], cwd=world, env={"GIVEN": "yes"}
    )
    async with serving as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(b"ping\n")
        await process.stdin.drain()
        line = (await process.stdout.readline()).decode().strip()
        assert processes_mentioning(marker)
    assert wait_gone_now(marker) == []  # the program and what it left running
    return line, process.returncode, marker


@pytest.mark.parametrize("tier", ["process", "bwrap"])
async def test_a_served_program_talks_over_pipes_and_is_ended_whole(
    tier: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if tier == "bwrap":
        request.getfixturevalue("bwrap_available")
    monkeypatch.setenv("SECRET_FROM_HOST", "do-not-pass")
    box: ProcessSandbox = BwrapSandbox() if tier == "bwrap" else ProcessSandbox()
    try:
        line, code, _marker = await _exchange(box, tmp_path)
    finally:
        box.close()
    assert line == f"ping yes {tmp_path} none"
    assert code == 4  # it ended on its own once its stdin closed


async def test_the_docker_tier_refuses_to_serve(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot run a long-lived server"):
        DockerSandbox().serve(["true"], cwd=tmp_path, env={})


async def test_a_missing_world_is_refused(tmp_path: Path) -> None:
    box = ProcessSandbox()
    try:
        with pytest.raises(FileNotFoundError):
            async with box.serve(["true"], cwd=tmp_path / "gone", env={}):
                pass
    finally:
        box.close()


async def test_the_strongest_tier_serves_in_the_tier_it_finds(tmp_path: Path) -> None:
    from helix.sandbox import StrongestSandbox

    box = StrongestSandbox()
    if box.tier == "docker":
        pytest.skip("the strongest tier here is docker, which does not serve")
    async with box.serve(["/bin/sh", "-c", "read line; echo got $line"], cwd=tmp_path, env={}) as p:
        assert p.stdin is not None
        assert p.stdout is not None
        p.stdin.write(b"it\n")
        await p.stdin.drain()
        assert (await p.stdout.readline()) == b"got it\n"
