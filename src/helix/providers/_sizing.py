"""A model sized from the hardware alone, for when no local server is up to list any.

The candidates are one family of instruct models trained to call tools, in the sizes
Ollama and llama.cpp both serve, at 4-bit (Q4_K_M, Ollama's default for these tags);
``recommend`` picks the largest that fits the GPU, else the largest that fits in RAM,
by the same estimate as for listed models. On the CPU the cores bound it too: memory
that holds a 14B model does not make two cores answer at a pace an agent can use.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ._local import Hardware, LocalModel, Recommendation, memory_need_gb, recommend

QUANT = "Q4_K_M"
CPU_PARAMS_PER_CORE_B = 1.5
"""On the CPU, at most this many billion parameters per core (2 cores: 3B; 8: 7B; 16: 14B)."""
CONTEXT = 16384
"""The context a suggested llama.cpp server is started with (docs/local-models.md)."""

# (Ollama tag, the nominal size and the parameters in billions, the size as its GGUF
# repository spells it)
_SIZES = (
    ("0.5b", 0.5, 0.49, "0.5B"),
    ("1.5b", 1.5, 1.54, "1.5B"),
    ("3b", 3, 3.09, "3B"),
    ("7b", 7, 7.62, "7B"),
    ("14b", 14, 14.8, "14B"),
    ("32b", 32, 32.8, "32B"),
)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A model to fetch and serve on this machine, and the commands that do it."""

    pick: Recommendation
    """The model (as Ollama names it), where it would run, the memory it needs, and why."""
    ollama_model: str
    """The model name for Helix once Ollama serves it: ``ollama:qwen2.5-coder:7b``."""
    llamacpp_model: str
    """The same once the ``llama-server`` line serves it: ``llamacpp:qwen2.5-coder-7b``."""
    ollama: tuple[str, ...]
    """Commands that fetch and serve it with Ollama."""
    llamacpp: tuple[str, ...]
    """The command that fetches and serves it with llama.cpp's ``llama-server``."""


def suggest_model(hardware: Hardware) -> Suggestion | None:
    """The largest candidate that fits ``hardware`` (``None``: not even the smallest)."""
    nominal = {
        LocalModel("ollama", f"qwen2.5-coder:{tag}", params, QUANT, None, "qwen2"): size
        for tag, size, params, _ in _SIZES
    }
    on_gpu = recommend(nominal, replace(hardware, ram_gb=0.0))  # the GPU's, if any fits
    pick = on_gpu or recommend(nominal, hardware)
    if pick is None:
        return None
    most = CPU_PARAMS_PER_CORE_B * hardware.cores
    if pick.device == "cpu" and nominal[pick.model] > most:
        pick = recommend([m for m, size in nominal.items() if size <= most], hardware) or pick
        bound = f"; {hardware.cores} cores: at most ~{most:g}B parameters on the CPU"
        pick = replace(pick, reason=pick.reason + bound)
    tag = pick.model.name.partition(":")[2]
    size = next(spelled for t, _, _, spelled in _SIZES if t == tag)
    alias = f"qwen2.5-coder-{tag}"
    serve = (
        f"llama-server -hf Qwen/Qwen2.5-Coder-{size}-Instruct-GGUF:{QUANT} --alias {alias}"
        f" --jinja --ctx-size {CONTEXT} --port 8080"
    )
    return Suggestion(
        pick=pick,
        ollama_model=pick.model.full_name,
        llamacpp_model=f"llamacpp:{alias}",
        ollama=("ollama serve", f"ollama pull {pick.model.name}"),
        llamacpp=(serve,),
    )


def why_none_fits(hardware: Hardware) -> str:
    """Why ``suggest_model`` found nothing: the smallest candidate and what it needs."""
    tag, _, params, _ = _SIZES[0]
    smallest = LocalModel("ollama", f"qwen2.5-coder:{tag}", params, QUANT, None)
    need = memory_need_gb(smallest)
    needs = "" if need is None else f" needs ~{need[0]:.1f} GB"
    return (
        f"this machine ({hardware.describe()}) holds no local model: the smallest suggested,"
        f" {smallest.name}{needs}; use a hosted provider, or a local server on a bigger"
        " machine (OLLAMA_HOST, LLAMACPP_BASE_URL)"
    )
