"""Providers: where a model lives and how to reach it (base URL, API key).

Adapters speak a family's wire format; a provider only says where and with which key.
The OpenAI-compatible presets are all the ``openai`` family at another address.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from helix.errors import MissingKeyError

Family = Literal["openai", "anthropic", "google"]

LOCAL_KEY = "not-needed"
"""Sent to local servers that take no key (the SDKs insist on sending one)."""


@dataclass(frozen=True, slots=True)
class Connection:
    """A provider resolved against the environment: an address and a key."""

    provider: str
    family: Family
    base_url: str | None
    """``None`` means the SDK's own default."""
    api_key: str
    key_env: str | None
    """The variable the key came from (named in errors), if any."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """A provider: its family, default address, and the variables that configure it."""

    name: str
    family: Family
    base_url: str | None
    base_url_env: str | None
    key_env: str | None
    key_required: bool = True
    local: bool = False
    """A server on the user's own machine or network (Ollama, llama.cpp, …)."""

    def connect(self, env: Mapping[str, str]) -> Connection:
        """Resolve the address and key from ``env``; ``MissingKeyError`` if a key is needed."""
        base_url = self.base_url
        override = env.get(self.base_url_env) if self.base_url_env else None
        if override:
            base_url = _ollama_url(override) if self.base_url_env == "OLLAMA_HOST" else override
        key = env.get(self.key_env) if self.key_env else None
        if not key:
            if self.key_required:
                raise MissingKeyError(self.name, self.key_env or "an API key")
            key = LOCAL_KEY
        return Connection(self.name, self.family, base_url, key, self.key_env if key else None)


def _ollama_url(host: str) -> str:
    """``OLLAMA_HOST`` is ``host[:port]`` or a URL; the OpenAI-compatible API is at /v1."""
    url = host if "://" in host else f"http://{host}"
    if url.count(":") == 1:
        url += ":11434"
    return url.rstrip("/") + "/v1"


def _spec(
    name: str,
    base_url: str,
    key_env: str | None,
    *,
    local: bool = False,
    base_url_env: str | None = None,
) -> ProviderSpec:
    return ProviderSpec(
        name=name,
        family="openai",
        base_url=base_url,
        base_url_env=base_url_env or f"{name.upper()}_BASE_URL",
        key_env=key_env,
        key_required=not local,
        local=local,
    )


PROVIDERS: dict[str, ProviderSpec] = {
    "openai": ProviderSpec("openai", "openai", None, "OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic": ProviderSpec(
        "anthropic", "anthropic", None, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"
    ),
    "google": ProviderSpec("google", "google", None, "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
    "ollama": _spec("ollama", "http://localhost:11434/v1", None, local=True,
                    base_url_env="OLLAMA_HOST"),
    "llamacpp": _spec("llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY", local=True),
    "vllm": _spec("vllm", "http://localhost:8000/v1", "VLLM_API_KEY", local=True),
    "lmstudio": _spec("lmstudio", "http://localhost:1234/v1", None, local=True),
    "openrouter": _spec("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": _spec("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together": _spec("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "deepseek": _spec("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    "mistral": _spec("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "xai": _spec("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
    "fireworks": _spec("fireworks", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
}  # fmt: skip
"""Every provider Helix knows, by the name used in ``provider:model``."""

OPENAI_COMPATIBLE = tuple(n for n, s in PROVIDERS.items() if s.family == "openai" and n != "openai")
"""The presets: OpenAI-compatible servers at their usual addresses."""
