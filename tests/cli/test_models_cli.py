"""``helix models`` and ``helix models recommend``, run as a real process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix.providers import PROVIDERS
from helix.testing import MockModelServer

CLOSED = "http://127.0.0.1:1/v1"
SECRET = "sk-never-print-me"
PROVIDER_VARIABLES = {v for s in PROVIDERS.values() for v in (s.key_env, s.base_url_env) if v}

TINY = {
    "name": "qwen2.5:0.5b",
    "size": 397_821_319,
    "details": {"parameter_size": "494.03M", "quantization_level": "Q4_K_M", "family": "qwen2"},
}
GIANT = {
    "name": "giant:9000b",
    "size": 5_000 * 10**9,  # no test machine holds this
    "details": {"parameter_size": "9000B", "quantization_level": "Q4_K_M", "family": "llama"},
}


def helix(home: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HELIX_") and k not in PROVIDER_VARIABLES
    }
    local = {"LLAMACPP_BASE_URL": CLOSED, "VLLM_BASE_URL": CLOSED, "LMSTUDIO_BASE_URL": CLOSED}
    return subprocess.run(
        [sys.executable, "-m", "helix", *args],
        capture_output=True,
        text=True,
        env={**inherited, "HELIX_HOME": str(home), **local, **env},
        timeout=120,
    )


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def ollama() -> Iterator[MockModelServer]:
    with MockModelServer(local_models=[TINY, GIANT]) as server:
        yield server


def test_help_lists_models(home: Path) -> None:
    result = helix(home, "--help", env={})
    assert result.returncode == 0, result.stderr
    assert "models" in result.stdout


def test_models_lists_providers_and_local_models_without_key_values(
    home: Path, ollama: MockModelServer
) -> None:
    result = helix(home, "models", env={"OLLAMA_HOST": ollama.url, "OPENAI_API_KEY": SECRET})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert SECRET not in out + result.stderr
    assert "OPENAI_API_KEY set" in out
    assert "ANTHROPIC_API_KEY not set" in out
    assert "ollama:qwen2.5:0.5b" in out
    assert "ollama:giant:9000b" in out
    assert "unreachable: connection refused" in out  # llama.cpp, vLLM, LM Studio


def test_models_json_is_one_object_per_line(home: Path, ollama: MockModelServer) -> None:
    env = {"OLLAMA_HOST": ollama.url, "OPENAI_API_KEY": SECRET}
    result = helix(home, "models", "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert SECRET not in result.stdout
    lines = json_lines(result.stdout)
    providers = {x["name"]: x for x in lines if x["kind"] == "provider"}
    assert set(providers) == set(PROVIDERS)
    assert providers["openai"]["key_set"] is True
    assert providers["anthropic"]["key_set"] is False
    servers = {x["provider"]: x for x in lines if x["kind"] == "server"}
    assert servers["ollama"]["reachable"] is True
    assert servers["llamacpp"] == {
        "kind": "server",
        "provider": "llamacpp",
        "url": "http://127.0.0.1:1/v1/models",
        "reachable": False,
        "error": "connection refused",
        "models": 0,
    }
    models = [x for x in lines if x["kind"] == "model"]
    assert {m["model"] for m in models} == {"ollama:qwen2.5:0.5b", "ollama:giant:9000b"}
    tiny = next(m for m in models if m["name"] == "qwen2.5:0.5b")
    assert (tiny["params_b"], tiny["quant"]) == (pytest.approx(0.494, abs=1e-3), "Q4_K_M")


def test_recommend_picks_what_fits(home: Path, ollama: MockModelServer) -> None:
    result = helix(home, "models", "recommend", env={"OLLAMA_HOST": ollama.url})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("hardware: ")
    assert " cores, " in result.stdout
    assert "pick: ollama:qwen2.5:0.5b" in result.stdout
    assert "why: qwen2.5:0.5b (Q4_K_M, ~0.4 GB) fits" in result.stdout


def test_recommend_json(home: Path, ollama: MockModelServer) -> None:
    result = helix(home, "models", "recommend", "--json", env={"OLLAMA_HOST": ollama.url})
    assert result.returncode == 0, result.stderr
    (pick,) = json_lines(result.stdout)
    assert pick["source"] == "servers"
    assert pick["model"] == "ollama:qwen2.5:0.5b"
    assert pick["device"] in ("gpu", "cpu")
    assert pick["hardware"]["cores"] >= 1
    assert pick["hardware"]["ram_gb"] > 0
    assert isinstance(pick["hardware"]["gpus"], list)


def test_recommend_fails_when_nothing_fits(home: Path) -> None:
    with MockModelServer(local_models=[GIANT]) as server:
        result = helix(home, "models", "recommend", "--json", env={"OLLAMA_HOST": server.url})
    assert result.returncode == 1
    (answer,) = json_lines(result.stdout)
    assert answer["model"] is None
    assert "pull a smaller model" in answer["error"]
    assert "pull a smaller model" in result.stderr


def closed_url(suffix: str = "") -> str:
    """An address on this machine nothing listens on: a port taken, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"127.0.0.1:{port}{suffix}"


def _nothing_running() -> dict[str, str]:
    closed = f"http://{closed_url('/v1')}"
    return {"OLLAMA_HOST": closed_url(), "LLAMACPP_BASE_URL": closed,
            "VLLM_BASE_URL": closed, "LMSTUDIO_BASE_URL": closed}  # fmt: skip


def test_with_no_local_server_recommend_sizes_from_the_hardware(home: Path) -> None:
    result = helix(home, "models", "recommend", env=_nothing_running())
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("hardware: ")
    assert lines[1].startswith("no local model server answered (ollama at http://127.0.0.1:")
    assert "connection refused" in lines[1]
    assert lines[1].endswith("sized from the hardware alone")
    assert lines[2].startswith("pick: ollama:qwen2.5-coder:")
    tag = lines[2].removeprefix("pick: ollama:qwen2.5-coder:")
    assert lines[3].startswith(f"why: qwen2.5-coder:{tag} (Q4_K_M, ~")
    assert lines[4] == f"start it with Ollama:  ollama serve  then  ollama pull qwen2.5-coder:{tag}"
    assert lines[5].startswith("or with llama.cpp:     llama-server -hf Qwen/Qwen2.5-Coder-")
    assert f"--alias qwen2.5-coder-{tag} --jinja" in lines[5]
    assert f"'llamacpp:qwen2.5-coder-{tag}'" in lines[6]
    assert result.stderr == ""


def test_with_no_local_server_recommend_json_says_it_is_from_the_hardware(home: Path) -> None:
    result = helix(home, "models", "recommend", "--json", env=_nothing_running())
    assert result.returncode == 0, result.stderr
    (answer,) = json_lines(result.stdout)
    assert answer["source"] == "hardware"
    assert [s["reachable"] for s in answer["servers"]] == [False] * 4
    assert answer["model"].startswith("ollama:qwen2.5-coder:")
    assert answer["device"] in ("gpu", "cpu")
    assert answer["need_gb"] > 0
    name = answer["name"]
    assert answer["start"]["ollama"] == ["ollama serve", f"ollama pull {name}"]
    assert answer["start"]["llamacpp"][0].startswith("llama-server -hf ")
    assert answer["llamacpp_model"] == "llamacpp:" + name.replace(":", "-")
    assert answer["hardware"]["cores"] >= 1
