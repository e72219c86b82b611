"""``helix models`` and ``helix models recommend``, run as a real process."""

from __future__ import annotations

import json
import os
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


def test_recommend_fails_when_no_local_server_answers(home: Path) -> None:
    result = helix(home, "models", "recommend", env={"OLLAMA_HOST": "127.0.0.1:1"})
    assert result.returncode == 1
    assert result.stdout.startswith("hardware: ")
    assert "no local model server answered" in result.stderr
    assert "ollama serve" in result.stderr
