"""Local models: hardware facts, server listings, the fit estimate and ``local:auto``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helix.errors import ModelNameError
from helix.providers import ModelRequest, Scenario, UserMessage, _local
from helix.providers._local import (
    GIB,
    Gpu,
    Hardware,
    LocalModel,
    bytes_per_param,
    detect_hardware,
    list_local_models,
    memory_need_gb,
    parse_nvidia_smi,
    parse_params,
    probe_servers,
    recommend,
    resolve_local,
)
from helix.providers._registry import open_model
from helix.testing import MockModelServer

CLOSED = "http://127.0.0.1:1/v1"
"""Nothing listens on port 1: a refused connection, at once."""


def ollama_entry(name: str, params: str, quant: str, size_gb: float, family: str = "qwen2"):
    return {
        "name": name,
        "model": name,
        "size": int(size_gb * 1e9),
        "details": {"parameter_size": params, "quantization_level": quant, "family": family},
    }


LISTING = [
    ollama_entry("qwen2.5-coder:7b", "7.6B", "Q4_K_M", 4.7),
    ollama_entry("qwen2.5-coder:14b", "14.8B", "Q4_K_M", 9.0),
    ollama_entry("qwen2.5-coder:32b", "32.8B", "Q4_K_M", 19.9),
    ollama_entry("nomic-embed-text:latest", "137M", "F16", 0.27, family="nomic-bert"),
]


def local_env(ollama: str = CLOSED, **others: str) -> dict[str, str]:
    env = {
        "OLLAMA_HOST": ollama,
        "LLAMACPP_BASE_URL": CLOSED,
        "VLLM_BASE_URL": CLOSED,
        "LMSTUDIO_BASE_URL": CLOSED,
    }
    return {**env, **others}


@pytest.fixture
def ollama() -> Iterator[MockModelServer]:
    with MockModelServer(Scenario.of({"text": "hi"}), local_models=LISTING) as server:
        yield server


def model(name: str, params: float | None, quant: str | None, size: float | None) -> LocalModel:
    return LocalModel("ollama", name, params, quant, size)


# -- hardware ---------------------------------------------------------------------------


def fake_run(stdout: str = "", returncode: int = 0, raises: BaseException | None = None):
    calls: list[list[str]] = []

    def run(args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(args)
        if raises is not None:
            raise raises
        return subprocess.CompletedProcess(args, returncode, stdout, "")

    return run, calls


def test_nvidia_smi_output_is_parsed(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       65536000 kB\nMemFree:        1000 kB\n")
    output = "NVIDIA GeForce RTX 4090, 24564\nNVIDIA RTX A2000, 6138\n"
    run, calls = fake_run(output)
    hardware = detect_hardware(run, which=lambda _: "/usr/bin/nvidia-smi", meminfo=meminfo)
    assert hardware.gpus == (
        Gpu("NVIDIA GeForce RTX 4090", 24564 / 1024),
        Gpu("NVIDIA RTX A2000", 6138 / 1024),
    )
    assert hardware.largest_gpu is not None
    assert hardware.largest_gpu.name == "NVIDIA GeForce RTX 4090"
    assert hardware.ram_gb == pytest.approx(65536000 * 1024 / GIB)
    assert hardware.cores >= 1
    assert calls[0][0] == "nvidia-smi"
    assert "--query-gpu=name,memory.total" in calls[0]


def test_unparsable_nvidia_smi_lines_are_skipped() -> None:
    assert parse_nvidia_smi("Tesla T4, [N/A]\n\ngarbage\nTesla T4, 15360\n") == (
        Gpu("Tesla T4", 15.0),
    )


def test_no_nvidia_smi_means_no_gpus_and_no_call(tmp_path: Path) -> None:
    run, calls = fake_run("NVIDIA, 24564")
    hardware = detect_hardware(run, which=lambda _: None, meminfo=tmp_path / "absent")
    assert hardware.gpus == ()
    assert calls == []
    assert hardware.ram_gb > 0  # the os.sysconf fallback
    assert "no GPU found" in hardware.describe()


@pytest.mark.parametrize(
    ("returncode", "raises"),
    [
        (9, None),
        (0, FileNotFoundError("nvidia-smi")),
        (0, subprocess.TimeoutExpired("nvidia-smi", 5)),
    ],
)
def test_a_failing_nvidia_smi_means_no_gpus(returncode: int, raises: BaseException | None) -> None:
    run, _ = fake_run("NVIDIA GeForce RTX 4090, 24564", returncode, raises)
    assert detect_hardware(run, which=lambda _: "/usr/bin/nvidia-smi").gpus == ()


# -- listing ----------------------------------------------------------------------------


async def test_ollama_listing_reads_params_quantisation_and_size(
    ollama: MockModelServer,
) -> None:
    host = ollama.url.removeprefix("http://")  # OLLAMA_HOST is often host:port
    models = await list_local_models(local_env(host))
    by_name = {m.name: m for m in models}
    assert set(by_name) == {e["name"] for e in LISTING}
    coder = by_name["qwen2.5-coder:14b"]
    assert (coder.provider, coder.params_b, coder.quant) == ("ollama", 14.8, "Q4_K_M")
    assert coder.size_gb == pytest.approx(9.0e9 / GIB)
    assert coder.full_name == "ollama:qwen2.5-coder:14b"
    assert by_name["nomic-embed-text:latest"].embedding
    assert [r.path for r in ollama.requests] == ["/api/tags"]


async def test_openai_style_listings_give_ids_and_guesses(ollama: MockModelServer) -> None:
    env = local_env(LLAMACPP_BASE_URL=ollama.openai_base_url, LLAMACPP_API_KEY="sk-local")
    models = await list_local_models(env)
    coder = next(m for m in models if m.name == "qwen2.5-coder:7b")
    assert (coder.provider, coder.params_b, coder.size_gb) == ("llamacpp", 7.0, None)
    (request,) = ollama.requests
    assert request.path == "/v1/models"
    assert request.api_key == "sk-local"


def test_unreachable_servers_are_absent_and_say_why(ollama: MockModelServer) -> None:
    env = local_env(VLLM_BASE_URL=f"{ollama.url}/not-here")
    listings = {s.provider: s for s in probe_servers(env)}
    assert set(listings) == {"ollama", "llamacpp", "vllm", "lmstudio"}
    assert listings["ollama"].error == "connection refused"
    assert listings["vllm"].error == "answered HTTP 404"
    assert not any(s.reachable for s in listings.values())


async def test_nothing_reachable_lists_nothing() -> None:
    assert await list_local_models(local_env()) == []


def test_credentials_in_a_base_url_are_sent_but_never_shown(ollama: MockModelServer) -> None:
    base = ollama.openai_base_url.replace("http://", "http://me:s3cret@")
    (listing,) = [s for s in probe_servers(local_env(LMSTUDIO_BASE_URL=base)) if s.reachable]
    assert "s3cret" not in listing.url
    assert ollama.requests[0].headers["authorization"].startswith("Basic ")


# -- estimates and the pick -------------------------------------------------------------


@pytest.mark.parametrize(
    ("quant", "per_param", "assumed"),
    [
        ("Q4_K_M", 0.56, False),
        ("Q5_K_S", 0.69, False),
        ("Q8_0", 1.06, False),
        ("F16", 2.0, False),
        ("BF16", 2.0, False),
        ("IQ4_XS", 0.56, False),
        (None, 0.56, True),
        ("mystery", 0.56, True),
    ],
)
def test_bytes_per_param(quant: str | None, per_param: float, assumed: bool) -> None:
    assert bytes_per_param(quant) == (per_param, assumed)


@pytest.mark.parametrize(
    ("text", "billions"),
    [
        ("7.6B", 7.6),
        ("494M", 0.494),
        ("mixtral:8x7b", 56.0),
        ("Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf", 32.0),
        ("llama-3.2-1b", 1.0),
        ("phi3:mini", None),
    ],
)
def test_parse_params(text: str, billions: float | None) -> None:
    assert parse_params(text) == billions


def test_need_is_the_size_when_known_else_params_times_bytes_plus_headroom() -> None:
    sized = memory_need_gb(model("a", 7.0, "Q4_K_M", 4.0))
    assert sized is not None
    assert sized[0] == pytest.approx(4.0 * 1.2 + 1)
    estimated = memory_need_gb(model("b", 10.0, "Q8_0", None))
    assert estimated is not None
    assert estimated[0] == pytest.approx(10e9 * 1.06 / GIB * 1.2 + 1)
    assert not estimated[1]
    assert memory_need_gb(model("c", None, None, None)) is None


GPU_16 = Hardware(cores=8, ram_gb=16.0, gpus=(Gpu("RTX 4080", 16.0),))
LISTED = [_local._ollama_model(e) for e in LISTING]


def test_picks_the_largest_model_that_fits_the_gpu() -> None:
    pick = recommend(LISTED, GPU_16)  # 32b needs ~23 GB: neither the GPU nor 75 % of RAM
    assert pick is not None
    assert (pick.model.name, pick.device) == ("qwen2.5-coder:14b", "gpu")
    assert pick.reason.startswith("qwen2.5-coder:14b (Q4_K_M, ~8.4 GB) fits the 16 GB GPU")


def test_a_larger_model_on_the_cpu_beats_a_smaller_one_on_the_gpu() -> None:
    pick = recommend(LISTED, Hardware(16, 64.0, (Gpu("RTX 4080", 16.0),)))
    assert pick is not None
    assert (pick.model.name, pick.device) == ("qwen2.5-coder:32b", "cpu")
    assert "too big for the GPU" in pick.reason


def test_without_a_gpu_the_cpu_path_uses_three_quarters_of_ram() -> None:
    pick = recommend(LISTED, Hardware(8, 16.0))  # 12 GB usable: 14b needs ~11 GB
    assert pick is not None
    assert (pick.model.name, pick.device) == ("qwen2.5-coder:14b", "cpu")
    assert "no GPU found" in pick.reason
    smaller = recommend(LISTED, Hardware(8, 12.0))  # 9 GB usable
    assert smaller is not None
    assert smaller.model.name == "qwen2.5-coder:7b"


def test_unknown_quantisation_is_assumed_q4_and_said_so() -> None:
    pick = recommend([model("mystery-13b", 13.0, None, None)], Hardware(8, 32.0))
    assert pick is not None
    assert pick.need_gb == pytest.approx(13e9 * 0.56 / GIB * 1.2 + 1)
    assert "assumed Q4" in pick.reason


def test_nothing_fits_and_embeddings_are_never_picked() -> None:
    assert recommend(LISTED, Hardware(2, 4.0)) is None
    assert recommend(LISTED[3:], Hardware(64, 512.0)) is None  # only the embedding model
    assert recommend([model("?", None, None, None)], Hardware(64, 512.0)) is None


# -- local:<name> and local:auto --------------------------------------------------------


def test_auto_resolves_to_the_pick(ollama: MockModelServer) -> None:
    env = local_env(ollama.url)
    assert resolve_local("auto", env=env, hardware=GPU_16) == "ollama:qwen2.5-coder:14b"


def test_auto_says_pull_a_smaller_model_when_nothing_fits(ollama: MockModelServer) -> None:
    with pytest.raises(ModelNameError, match="pull a smaller model"):
        resolve_local("auto", env=local_env(ollama.url), hardware=Hardware(2, 4.0))


def test_auto_says_start_a_server_when_none_answers() -> None:
    with pytest.raises(ModelNameError, match="ollama serve") as caught:
        resolve_local("auto", env=local_env(), hardware=GPU_16)
    assert "connection refused" in str(caught.value)


def test_a_named_local_model_is_found_on_the_first_server_having_it(
    ollama: MockModelServer,
) -> None:
    env = local_env(ollama.url, LLAMACPP_BASE_URL=ollama.openai_base_url)
    assert resolve_local("qwen2.5-coder:7b", env=env) == "ollama:qwen2.5-coder:7b"
    assert resolve_local("nomic-embed-text", env=env) == "ollama:nomic-embed-text:latest"
    only_llamacpp = local_env(LLAMACPP_BASE_URL=ollama.openai_base_url)
    assert resolve_local("qwen2.5-coder:7b", env=only_llamacpp) == "llamacpp:qwen2.5-coder:7b"


def test_a_missing_local_model_names_the_fix(ollama: MockModelServer) -> None:
    with pytest.raises(ModelNameError, match=r"ollama pull llama3") as caught:
        resolve_local("llama3", env=local_env(ollama.url))
    assert "ollama:qwen2.5-coder:7b" in str(caught.value)
    with pytest.raises(ModelNameError, match="no local model server answered"):
        resolve_local("llama3", env=local_env())


async def test_open_model_local_auto_builds_the_picked_ollama_adapter(
    ollama: MockModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_local, "detect_hardware", lambda: GPU_16)
    adapter = open_model("local:auto", env=local_env(ollama.url))
    try:
        assert adapter.name == "ollama:qwen2.5-coder:14b"
        response = await adapter.request(ModelRequest(messages=(UserMessage("hi"),)))
    finally:
        await adapter.aclose()
    assert response.text == "hi"
    chat = [r for r in ollama.requests if r.api == "openai"]
    assert chat[0].path == "/v1/chat/completions"
    assert chat[0].body["model"] == "qwen2.5-coder:14b"
