"""Local models: what the machine can hold, what local servers offer, and ``local:auto``.

Sizes are in GB of 2**30 bytes, the unit RAM and VRAM are sold in (a "24 GB" card).
Listing uses the standard library in threads so that ``helix models`` works without any
provider SDK installed.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from helix.errors import ModelNameError

from ._provider import LOCAL_KEY, PROVIDERS

GIB = 2**30
Runner = Callable[..., "subprocess.CompletedProcess[str]"]
Device = Literal["gpu", "cpu"]

HEADROOM = 1.2
"""KV cache and activations grow with the context; 20 % above the weights covers a typical one."""
OVERHEAD_GB = 1.0
"""The runtime itself (CUDA context, server process)."""
RAM_SHARE = 0.75
"""Leave a quarter of RAM to the OS and everything else (and Apple's GPU limit is ~75 %)."""

_NVIDIA_QUERY = ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"]
_Q_BYTES = {2: 0.33, 3: 0.46, 4: 0.56, 5: 0.69, 6: 0.82, 8: 1.06}
"""Bytes per parameter of llama.cpp's k-quants, block scales included."""
_MAX_LISTING = 8 * 2**20
# Local servers are on this machine or network: a corporate HTTP(S)_PROXY must not see them.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU and its memory."""

    name: str
    vram_gb: float


@dataclass(frozen=True, slots=True)
class Hardware:
    """What this machine offers to a model."""

    cores: int
    ram_gb: float
    gpus: tuple[Gpu, ...] = ()

    @property
    def largest_gpu(self) -> Gpu | None:
        """The GPU with the most memory, if any (a model is not split across cards here)."""
        return max(self.gpus, key=lambda g: g.vram_gb, default=None)

    def describe(self) -> str:
        """One line for people, e.g. ``16 cores, 62.7 GB RAM, no GPU found``."""
        gpus = ", ".join(f"{g.name} ({g.vram_gb:.0f} GB)" for g in self.gpus) or "no GPU found"
        return f"{self.cores} cores, {self.ram_gb:.1f} GB RAM, {gpus}"


def detect_hardware(
    run: Runner = subprocess.run,
    *,
    which: Callable[[str], str | None] = shutil.which,
    meminfo: Path = Path("/proc/meminfo"),
) -> Hardware:
    """Read the core count, RAM and NVIDIA GPUs; detection failures yield less, not errors.

    Args:
        run: Runs ``nvidia-smi`` (``subprocess.run``'s signature); injectable for tests.
        which: Finds ``nvidia-smi`` on the PATH.
        meminfo: Linux's memory summary; other systems fall back to ``os.sysconf``.

    """
    return Hardware(os.cpu_count() or 1, _ram_gb(meminfo), _nvidia_gpus(run, which))


def _ram_gb(meminfo: Path) -> float:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024 / GIB
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB
    except (OSError, ValueError, AttributeError):
        return 0.0


def _nvidia_gpus(run: Runner, which: Callable[[str], str | None]) -> tuple[Gpu, ...]:
    if which("nvidia-smi") is None:
        return ()
    try:
        done = run(_NVIDIA_QUERY, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return ()
    return parse_nvidia_smi(done.stdout) if done.returncode == 0 else ()


def parse_nvidia_smi(output: str) -> tuple[Gpu, ...]:
    """Parse ``name, memory.total`` CSV lines (MiB); lines that do not parse are skipped."""
    gpus = []
    for line in output.splitlines():
        name, _, mib = line.rpartition(",")
        try:
            gpus.append(Gpu(name.strip(), float(mib) / 1024))
        except ValueError:
            continue  # "[N/A]" and the like: some drivers cannot report the memory
    return tuple(g for g in gpus if g.name)


@dataclass(frozen=True, slots=True)
class LocalModel:
    """A model a local server offers; sizes are unknown for OpenAI-style listings."""

    provider: str
    name: str
    params_b: float | None
    quant: str | None
    size_gb: float | None
    family: str | None = None

    @property
    def embedding(self) -> bool:
        """Whether this is an embedding model (listed by Ollama, but it cannot chat)."""
        return "embed" in self.name.lower() or "bert" in (self.family or "").lower()

    @property
    def full_name(self) -> str:
        """The name Helix takes, e.g. ``ollama:qwen2.5-coder:7b``."""
        return f"{self.provider}:{self.name}"


@dataclass(frozen=True, slots=True)
class ServerListing:
    """One local server's answer: its models, or why it could not be listed."""

    provider: str
    url: str
    models: tuple[LocalModel, ...] = ()
    error: str | None = None

    @property
    def reachable(self) -> bool:
        """Whether the server answered with a model list."""
        return self.error is None


_PARAMS = re.compile(r"(?<![\w.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", re.I)
_QUANT = re.compile(r"(?<![a-z0-9])(i?q\d(?:_[a-z0-9]+)*|bf16|fp16|f16|f32|fp8|mxfp4)\b", re.I)


def parse_params(text: str | None) -> float | None:
    """Billions of parameters from ``"7.6B"``, ``"494M"``, ``"8x7B"`` or a name holding one."""
    match = _PARAMS.search(text or "")
    if match is None:
        return None
    experts, number, unit = match.groups()
    value = float(number) * (int(experts) if experts else 1)
    return value / 1000 if unit.lower() == "m" else value


def bytes_per_param(quant: str | None) -> tuple[float, bool]:
    """Bytes per parameter for a quantisation, and whether it was assumed (unknown → Q4)."""
    text = (quant or "").upper()
    if q := re.search(r"Q(\d)", text):
        return _Q_BYTES.get(int(q.group(1)), _Q_BYTES[4]), int(q.group(1)) not in _Q_BYTES
    if f := re.search(r"F(?:P)?(\d+)", text):  # F16, BF16, FP8, MXFP4: bits per parameter
        return int(f.group(1)) / 8, False
    return _Q_BYTES[4], True


def _ollama_model(entry: Mapping[str, Any]) -> LocalModel:
    name = str(entry.get("name") or entry.get("model") or "")
    details = entry.get("details")
    details = details if isinstance(details, dict) else {}
    return LocalModel(
        provider="ollama",
        name=name,
        params_b=parse_params(_str(details.get("parameter_size"))) or parse_params(name),
        quant=_str(details.get("quantization_level")) or _guess_quant(name),
        size_gb=_gb(entry.get("size")),
        family=_str(details.get("family")),
    )


def _openai_model(provider: str, entry: Mapping[str, Any]) -> LocalModel:
    # Usually only an id: guess from names like "Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf".
    # llama.cpp's server adds "meta" with the parameter count and file size.
    name = str(entry.get("id") or "")
    meta = entry.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    params = meta.get("n_params")
    params_b = params / 1e9 if isinstance(params, int | float) and params > 0 else None
    return LocalModel(
        provider, name, params_b or parse_params(name), _guess_quant(name), _gb(meta.get("size"))
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _gb(size: object) -> float | None:
    return size / GIB if isinstance(size, int | float) and size > 0 else None


def _guess_quant(name: str) -> str | None:
    match = _QUANT.search(name)
    return match.group(1).upper() if match else None


def _get_json(url: str, key: str | None, timeout: float) -> Any:
    headers = {"Accept": "application/json"}
    # urllib cannot take "user:pass@" in a URL (and would echo it in errors): send it as auth.
    userinfo = urlsplit(url).netloc.rpartition("@")[0]
    if key or userinfo:
        basic = base64.b64encode(unquote(userinfo).encode()).decode()
        headers["Authorization"] = f"Bearer {key}" if key else f"Basic {basic}"
    request = urllib.request.Request(_public(url), headers=headers)
    with _OPENER.open(request, timeout=timeout) as answer:
        return json.loads(answer.read(_MAX_LISTING))


def _why(error: Exception) -> str:
    if isinstance(error, urllib.error.HTTPError):
        return f"answered HTTP {error.code}"
    if isinstance(error, json.JSONDecodeError | KeyError | TypeError):
        return "answered, but not with a model list"
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, TimeoutError):
        return "timed out"
    return str(reason) or type(reason).__name__


def _public(url: str) -> str:
    """``url`` without credentials (``user:pass@``), fit to print."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _probe(provider: str, env: Mapping[str, str], timeout: float) -> ServerListing:
    connection = PROVIDERS[provider].connect(env)
    base = (connection.base_url or "").rstrip("/")
    key = connection.api_key if connection.api_key != LOCAL_KEY else None
    ollama = provider == "ollama"
    url = base.removesuffix("/v1") + "/api/tags" if ollama else base + "/models"
    try:
        body = _get_json(url, key, timeout)
        entries = body["models"] if ollama else body["data"]
        models = tuple(
            _ollama_model(e) if ollama else _openai_model(provider, e)
            for e in entries
            if isinstance(e, dict)
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, urllib.error.HTTPError):
            error.close()  # it holds the response open
        return ServerListing(provider, _public(url), error=_why(error))
    return ServerListing(provider, _public(url), tuple(m for m in models if m.name))


def probe_servers(env: Mapping[str, str], *, timeout: float = 1.0) -> list[ServerListing]:
    """Ask every local server for its models at once (blocking, about ``timeout`` at most).

    Servers come in ``PROVIDERS`` order, which is also the order ``local:<name>`` tries.
    """
    providers = [name for name, spec in PROVIDERS.items() if spec.local]
    with ThreadPoolExecutor(max_workers=len(providers)) as pool:
        return list(pool.map(lambda p: _probe(p, env, timeout), providers))


async def list_servers(env: Mapping[str, str]) -> list[ServerListing]:
    """Run ``probe_servers`` without blocking the event loop."""
    return await asyncio.to_thread(probe_servers, env)


async def list_local_models(env: Mapping[str, str]) -> list[LocalModel]:
    """Every model of every reachable local server; unreachable servers are left out."""
    return [m for server in await list_servers(env) for m in server.models]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The model picked for this machine, and why."""

    model: LocalModel
    need_gb: float
    device: Device
    reason: str


def memory_need_gb(model: LocalModel) -> tuple[float, bool] | None:
    """Estimated memory to run ``model`` and whether its quantisation was assumed.

    ``None`` when neither the size nor the parameter count is known.
    """
    assumed = False
    weights = model.size_gb
    if weights is None:
        if model.params_b is None:
            return None
        per_param, assumed = bytes_per_param(model.quant)
        weights = model.params_b * 1e9 * per_param / GIB
    return weights * HEADROOM + OVERHEAD_GB, assumed


def fit(need_gb: float, hardware: Hardware) -> Device | None:
    """Where a model needing ``need_gb`` runs: the largest GPU, else the CPU, else nowhere."""
    gpu = hardware.largest_gpu
    if gpu is not None and need_gb <= gpu.vram_gb:
        return "gpu"
    return "cpu" if need_gb <= RAM_SHARE * hardware.ram_gb else None


def recommend(models: Iterable[LocalModel], hardware: Hardware) -> Recommendation | None:
    """Pick the largest model (by parameters, then size) that fits the machine, if any."""
    fitting = []
    for model in (m for m in models if not m.embedding):
        estimate = memory_need_gb(model)
        device = None if estimate is None else fit(estimate[0], hardware)
        if estimate is not None and device is not None:
            fitting.append((model, *estimate, device))
    if not fitting:
        return None
    model, need, assumed, device = max(
        fitting, key=lambda f: (f[0].params_b or 0.0, f[0].size_gb or f[1])
    )
    return Recommendation(model, need, device, _reason(model, need, device, assumed, hardware))


def _reason(
    model: LocalModel, need: float, device: Device, assumed: bool, hardware: Hardware
) -> str:
    quant = "quantisation unknown, assumed Q4" if assumed else model.quant or "size as listed"
    weights = model.size_gb or (need - OVERHEAD_GB) / HEADROOM
    head = f"{model.name} ({quant}, ~{weights:.1f} GB)"
    if device == "gpu" and (gpu := hardware.largest_gpu) is not None:
        return f"{head} fits the {gpu.vram_gb:.0f} GB GPU with headroom (needs ~{need:.1f} GB)"
    why = "no GPU found" if not hardware.gpus else "too big for the GPU"
    return (
        f"{head} fits in {hardware.ram_gb:.1f} GB of RAM on the CPU ({why}; needs"
        f" ~{need:.1f} GB): expect it to be slower than on a GPU"
    )


def _all_down(servers: list[ServerListing]) -> str | None:
    if any(s.reachable for s in servers):
        return None
    tried = ", ".join(f"{s.provider} at {s.url} ({s.error})" for s in servers)
    return (
        f"no local model server answered ({tried}): start one, e.g. `ollama serve`,"
        " or point OLLAMA_HOST / LLAMACPP_BASE_URL at yours"
    )


def why_no_pick(servers: Iterable[ServerListing], hardware: Hardware) -> str:
    """Why ``recommend`` found nothing for these listings, and what to do about it."""
    servers = list(servers)
    if (down := _all_down(servers)) is not None:
        return down
    models = [m for s in servers for m in s.models if not m.embedding]
    if not models:
        return (
            "the local servers list no chat models: pull one, e.g. `ollama pull qwen2.5-coder:7b`"
        )
    listed = ", ".join(m.full_name for m in models)
    return (
        f"nothing listed fits this machine ({hardware.describe()}; listed: {listed}):"
        " pull a smaller model, e.g. `ollama pull qwen2.5-coder:3b`"
    )


def resolve_local(
    model: str,
    *,
    env: Mapping[str, str],
    hardware: Hardware | None = None,
    timeout: float = 1.0,
) -> str:
    """Turn ``local:<model>`` into ``provider:model``; ``auto`` picks what fits this machine.

    Args:
        model: What follows ``local:``: a model name, or ``auto``.
        env: Where the local servers' addresses and keys are read from.
        hardware: The machine's facts for ``auto``; detected when not given.
        timeout: Seconds to wait for each server's listing.

    Raises:
        ModelNameError: No local server answers, the model is on none of them, or (for
            ``auto``) no listed model fits; the message says how to fix it.

    """
    servers = probe_servers(env, timeout=timeout)
    models = [m for s in servers for m in s.models]
    if model == "auto":
        hardware = hardware or detect_hardware()
        pick = recommend(models, hardware)
        if pick is None:
            raise ModelNameError(f"local:auto: {why_no_pick(servers, hardware)}")
        return pick.model.full_name
    for candidate in models:
        # Ollama reads an untagged name as ":latest"; accept it the same way.
        if candidate.name in (model, f"{model}:latest"):
            return candidate.full_name
    if (down := _all_down(servers)) is not None:
        raise ModelNameError(f"local:{model}: {down}")
    listed = ", ".join(m.full_name for m in models) or "none"
    raise ModelNameError(
        f"local:{model}: no local server has {model!r} (available: {listed}). Pull it, e.g."
        f" `ollama pull {model}`, or name one of the available models"
    )
