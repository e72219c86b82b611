"""Choosing a tier, and the docker tier's exact command line (run for real only where
an engine answers; no Docker engine runs on Helix's CI machines)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helix.errors import ConfigError
from helix.sandbox import (
    AUTOMATIC,
    TIERS,
    DockerSandbox,
    ProcessSandbox,
    check_tier,
    require_tier,
    resolve_sandbox,
    sandbox_facts,
    tier_statuses,
)


def _available() -> dict[str, bool]:
    return {s.tier: s.available for s in tier_statuses()}


def test_the_default_is_the_strongest_available_tier_and_says_why() -> None:
    available = [t for t in TIERS if _available()[t] and t in AUTOMATIC]
    sandbox = resolve_sandbox()
    assert sandbox.tier == available[-1]
    assert sandbox.reason.startswith("strongest available")
    for status in tier_statuses():
        if not status.available and status.tier in AUTOMATIC:
            assert f"{status.tier}: {status.reason}" in sandbox.reason


@pytest.mark.usefixtures("bwrap_available")
def test_on_this_host_bwrap_is_chosen_when_docker_is_missing() -> None:
    if _available()["docker"]:
        pytest.skip("a Docker engine answers here")
    assert resolve_sandbox().tier == "bwrap"
    assert "docker: " in resolve_sandbox().reason


def test_a_tier_can_be_asked_for() -> None:
    sandbox = resolve_sandbox("process")
    assert isinstance(sandbox, ProcessSandbox)
    assert sandbox.tier == "process"
    assert sandbox.reason == "asked for"


def test_an_unknown_tier_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown sandbox tier 'vm'"):
        resolve_sandbox("vm")
    with pytest.raises(ConfigError, match="choose from process, bwrap, docker"):
        check_tier("")


def test_an_unavailable_tier_says_why() -> None:
    missing = [t for t, ok in _available().items() if not ok]
    if not missing:
        pytest.skip("every tier is available here")
    with pytest.raises(ConfigError, match=f"the {missing[0]} sandbox tier is not available here"):
        resolve_sandbox(missing[0])


def test_minimum_tiers() -> None:
    require_tier("bwrap", "process")
    require_tier("bwrap", "bwrap")
    with pytest.raises(ConfigError, match="at least 'bwrap' but this host gives 'process'"):
        require_tier("process", "bwrap")
    with pytest.raises(ConfigError, match="at least 'docker'"):
        resolve_sandbox("process", minimum="docker")


def test_host_facts_are_reported() -> None:
    facts = sandbox_facts()
    assert set(facts) == {"seccomp", "pids_cgroup"}
    assert all(isinstance(value, bool) for value in facts.values())


def test_docker_command_line_is_the_hardened_profile(tmp_path: Path) -> None:
    box = DockerSandbox(image="img:1", memory_bytes=1 << 30, pids=100, cpus=1.5, user="1000:1000")
    argv = box.argv("echo hi", tmp_path, name="helix-x")
    assert argv[1:3] == ["run", "--rm"]
    joined = " ".join(argv)
    for option in (
        "--user 1000:1000",
        "--cap-drop ALL",
        "--security-opt no-new-privileges",
        "--read-only",
        f"--memory={1 << 30} --memory-swap={1 << 30}",
        "--pids-limit=100",
        "--cpus=1.5",
        "--network none",
        f"--mount type=bind,source={tmp_path},target={tmp_path} --workdir {tmp_path}",
        "--name helix-x",
        "--init",
    ):
        assert option in joined, option
    assert argv[-4:] == ["img:1", "/bin/sh", "-c", "echo hi"]
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a in ("--mount", "-v", "--volume")]
    assert mounts == [f"type=bind,source={tmp_path},target={tmp_path}"]  # the only one
    assert "--privileged" not in argv
    assert not any(a.startswith("--cap-add") for a in argv)


def test_docker_with_egress_joins_the_proxy_instead_of_the_network(tmp_path: Path) -> None:
    argv = DockerSandbox(user="1000:1000").argv("true", tmp_path, name="n", proxy_port=4242)
    joined = " ".join(argv)
    assert "--network none" not in joined
    assert "--env https_proxy=http://host.docker.internal:4242" in joined
    assert "--add-host host.docker.internal:host-gateway" in joined


def test_docker_never_runs_as_root(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="never runs commands as root"):
        DockerSandbox(user="0:0")
    default = DockerSandbox().user
    assert default.split(":")[0] != "0"
    if os.geteuid() == 0:
        assert default == "65534:65534"


async def test_docker_runs_for_real_where_an_engine_answers(tmp_path: Path) -> None:
    status = next(s for s in tier_statuses() if s.tier == "docker")
    if not status.available:
        pytest.skip(f"no Docker engine here (expected on CI machines): {status.reason}")
    box = DockerSandbox()
    result = await box.run(
        "id -u; echo hi > f; cat /proc/self/status | grep CapEff", cwd=tmp_path, timeout_s=120
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] != "0"
    assert "CapEff:\t0000000000000000" in result.output


def test_a_tier_chosen_only_when_asked_for_is_not_chosen_unasked() -> None:
    assert "podman" in TIERS
    assert "podman" not in AUTOMATIC
    assert resolve_sandbox().tier != "podman"
