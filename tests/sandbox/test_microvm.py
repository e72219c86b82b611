"""The microvm tier, run for real: the escape suite (a guest per command) and its profile."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import (
    EgressDecision,
    EgressPolicy,
    MicrovmSandbox,
    Sandbox,
    policy_hook,
    resolve_sandbox,
    tier_status,
)
from helix.sandbox._microvm_accel import accel
from helix.sandbox._microvm_image import default_microvm_dir, kernel_dir, prepare
from helix.testing.conformance import SandboxArena, SandboxConformance
from tests.conftest import microvm_tier

pytestmark = microvm_tier  # one worker boots every microvm test's guests


class TestMicrovmTier(SandboxConformance):
    """Every attack contained: a guest kernel of its own, no network, the world by 9p."""

    expected_escapes = frozenset()
    timeout_s = 30.0

    @pytest.fixture
    def sandbox(self, arena: SandboxArena, microvm_available: None) -> Iterator[Sandbox]:
        box = MicrovmSandbox(
            hidden=[arena.helix_data],
            pids=self.max_processes,
            memory_bytes=self.max_memory_bytes,
            cpu_seconds=self.cpu_seconds,
        )
        yield box
        box.close()


def test_the_tier_is_registered_last_and_never_chosen_unasked(microvm_available: None) -> None:
    from helix.sandbox._tiers import AUTOMATIC, TIERS

    assert TIERS[-1] == "microvm"
    assert "microvm" not in AUTOMATIC
    assert tier_status("microvm").tier == "microvm"
    assert resolve_sandbox().tier != "microvm"
    assert resolve_sandbox(live=True).tier != "microvm"  # not even for a live world
    assert resolve_sandbox(minimum="microvm", live=True).tier == "microvm"
    assert resolve_sandbox(minimum="microvm").tier == "microvm"


def test_the_profile_holds_every_flag(tmp_path: Path, microvm_available: None) -> None:
    sandbox = MicrovmSandbox(memory_bytes=256 << 20, cpus=1)
    image = prepare(default_microvm_dir())
    folder = tmp_path / "a,box"
    argv = " ".join(sandbox.qemu_argv(image, folder))
    for flag in (
        "-M microvm",
        "-nic none",
        "-m 256M",
        "-smp 1",
        "-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny",
        f"-qmp unix:{tmp_path}/a,,box/qmp.sock,server=on,wait=off",
        f"socket,id=usr,path={tmp_path}/a,,box/usr.sock,server=on,wait=off",
        "virtserialport,chardev=usr,name=helix.usr",
        "virtserialport,chardev=world,name=helix.world",
    ):
        assert flag in argv, flag
    assert "9p" not in argv  # no 9p device: QEMU would refuse to migrate the guest
    assert "/usr," not in argv  # nor any of the host's folders given to QEMU
    how, why = accel()
    assert f"-accel {how}" in argv, why
    assert "OPENAI" not in argv


def test_a_box_cannot_serve(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="long-lived server"):
        MicrovmSandbox().serve(["cat"], cwd=tmp_path, env={})


async def test_egress_goes_through_the_proxy_in_a_box(
    microvm_available: None, tmp_path: Path, web: int
) -> None:
    seen: list[str] = []

    async def record(decision: EgressDecision) -> None:
        seen.append(f"{decision.host}:{decision.port} {decision.verdict}")

    hook = policy_hook(EgressPolicy(allow=("127.0.0.1",)), record)
    box = await MicrovmSandbox(memory_bytes=512 << 20).open_box(cwd=tmp_path, egress=hook)
    try:
        fetch = (
            "import urllib.request as u\n"
            f"print(u.urlopen('http://127.0.0.1:{web}/', timeout=10).read().decode().strip())\n"
            "try:\n"
            "    u.urlopen('http://denied.example/', timeout=10)\n"
            "except Exception as e:\n"
            "    print(getattr(e, 'code', e))\n"
        )
        (tmp_path / "fetch.py").write_text(fetch)
        for _ in range(2):  # the bridge serves every exec, for as long as the box lives
            result = await box.exec(["python3", "fetch.py"], timeout_s=30)
            assert result.output.splitlines() == ["hello from the host", "403"], result.output
        direct = f"import socket; socket.create_connection(('127.0.0.1', {web}), 3)"
        blocked = await box.exec(["python3", "-c", direct], timeout_s=30)
        assert blocked.exit_code != 0  # no network but the proxy's port
    finally:
        await box.close()
    allowed, denied = f"127.0.0.1:{web} allow", "denied.example:80 deny"
    assert seen == [allowed, denied, allowed, denied]


async def test_boxes_from_one_template_differ_in_randomness_and_keep_the_time(
    microvm_available: None, tmp_path: Path
) -> None:
    sandbox = MicrovmSandbox(memory_bytes=512 << 20)
    seen = []
    for _ in range(2):
        box = await sandbox.open_box(cwd=tmp_path)
        try:
            probe = "head -c 16 /dev/urandom | od -An -tx1; date +%s > now"
            result = await box.exec(["sh", "-c", probe], timeout_s=30)
        finally:
            await box.close()
        seen.append(result.output)
        stamp = tmp_path / "now"  # written by the guest, dated by the host's kernel
        assert abs(int(stamp.read_text()) - stamp.stat().st_mtime) < 60
    assert seen[0] != seen[1]  # not the template's random state, replayed


@pytest.fixture
async def templated(
    microvm_available: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[MicrovmSandbox, Path]:
    """A sandbox of its own folder whose first box built its template; the templates."""
    monkeypatch.setenv("HELIX_MICROVM_KERNEL", str(kernel_dir(default_microvm_dir())))
    folder = tmp_path / "microvm"
    sandbox = MicrovmSandbox(memory_bytes=256 << 20, folder=folder)
    first = await sandbox.open_box(cwd=tmp_path)
    await first.close()
    return sandbox, folder / "templates"


async def _run_in_a_new_box(sandbox: MicrovmSandbox, world: Path, argv: list[str]) -> str:
    box = await sandbox.open_box(cwd=world)
    try:
        result = await box.exec(argv, timeout_s=30)
    finally:
        await box.close()
    assert result.exit_code == 0, result.output
    return result.output


async def test_a_template_that_does_not_load_is_replaced(
    templated: tuple[MicrovmSandbox, Path], tmp_path: Path
) -> None:
    sandbox, templates = templated
    [state] = templates.glob("*.state")
    state.write_bytes(b"not a migration stream")
    # the template fails: booted afresh
    assert await _run_in_a_new_box(sandbox, tmp_path, ["echo", "up"]) == "up\n"
    assert not state.exists() or state.stat().st_size > 1 << 20


async def test_a_template_whose_share_state_is_damaged_is_replaced(
    templated: tuple[MicrovmSandbox, Path], tmp_path: Path
) -> None:
    """The template's ``/usr`` share state is read as untrusted: damaged, it is rebuilt."""
    sandbox, templates = templated
    [shares] = templates.glob("*.usr.json")
    assert json.loads(shares.read_text())["fids"]  # the guest's /usr, mounted in it
    shares.write_text('{"version": 1, "fids": [{"fid": 1, "path": ["..", "etc"]}]}')
    # refused: this box boots afresh
    await _run_in_a_new_box(sandbox, tmp_path, ["ls", "/usr/bin/python3"])
    assert not shares.exists()  # forgotten with its template: the next box builds anew
