"""A model sized from the hardware alone: the largest that fits the GPU, else RAM and cores."""

from __future__ import annotations

import pytest

from helix.providers import Hardware, suggest_model, why_none_fits
from helix.providers._local import Gpu


@pytest.mark.parametrize(
    ("hardware", "tag", "device"),
    [
        (Hardware(16, 64.0, (Gpu("RTX 4090", 24.0),)), "32b", "gpu"),
        (Hardware(16, 64.0, (Gpu("RTX 3070", 8.0),)), "7b", "gpu"),  # the GPU before the RAM
        (Hardware(16, 64.0), "14b", "cpu"),  # 16 cores: up to ~24B on the CPU
        (Hardware(8, 64.0), "7b", "cpu"),  # the RAM holds 32B; eight cores do not run it
        (Hardware(2, 23.6), "3b", "cpu"),
        (Hardware(32, 8.0), "7b", "cpu"),  # cores to spare; the RAM (6 GB usable) bounds it
        (Hardware(4, 2.0), "0.5b", "cpu"),
    ],
)
def test_the_size_fits_the_memory_and_the_cores(hardware: Hardware, tag: str, device: str) -> None:
    suggestion = suggest_model(hardware)
    assert suggestion is not None
    pick = suggestion.pick
    assert pick.model.name == f"qwen2.5-coder:{tag}"
    assert pick.device == device
    assert suggestion.ollama_model == f"ollama:qwen2.5-coder:{tag}"
    assert suggestion.llamacpp_model == f"llamacpp:qwen2.5-coder-{tag}"
    assert suggestion.ollama == ("ollama serve", f"ollama pull qwen2.5-coder:{tag}")
    (serve,) = suggestion.llamacpp
    assert serve.startswith("llama-server -hf Qwen/Qwen2.5-Coder-")
    assert f"-Instruct-GGUF:Q4_K_M --alias qwen2.5-coder-{tag} --jinja" in serve
    assert f"needs ~{pick.need_gb:.1f} GB" in pick.reason


def test_a_core_bound_says_so_in_the_reason() -> None:
    suggestion = suggest_model(Hardware(2, 64.0))
    assert suggestion is not None
    assert suggestion.pick.model.name == "qwen2.5-coder:3b"
    assert suggestion.pick.reason.endswith("2 cores: at most ~3B parameters on the CPU")
    unbound = suggest_model(Hardware(64, 64.0))
    assert unbound is not None
    assert "cores" not in unbound.pick.reason


def test_a_machine_too_small_for_any_gets_none_and_the_reason() -> None:
    tiny = Hardware(1, 1.0)
    assert suggest_model(tiny) is None
    said = why_none_fits(tiny)
    assert "1 cores, 1.0 GB RAM, no GPU found" in said
    assert "qwen2.5-coder:0.5b needs ~1.3 GB" in said
