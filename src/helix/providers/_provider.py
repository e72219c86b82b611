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
class Quirks:
    """Where an OpenAI-compatible server parts from OpenAI's own API, declared per preset.

    The one place a preset's known departures live: the adapter reads these fields, never
    a provider's name. Every preset is sent ``tool_choice`` whenever tools are offered
    (llama-cpp-python's server takes a missing one as ``"none"`` and drops the tools), so
    that needs no field here. docs/models.md ("Server quirks") lists each preset's.
    """

    null_content_with_tool_calls: bool = True
    """The server takes ``"content": null`` in an assistant message beside its
    ``tool_calls`` (OpenAI's own form). ``False``: ``""`` is sent instead
    (llama-cpp-python's server answers 500, "Input should be a valid string", to null)."""


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
    quirks: Quirks = Quirks()
    """How the server parts from OpenAI's API (its preset's)."""


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
    quirks: Quirks = Quirks()
    """Its server's known departures from OpenAI's API (OpenAI-compatible presets)."""

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
        key_env = self.key_env if key else None
        return Connection(self.name, self.family, base_url, key, key_env, self.quirks)


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
    quirks: Quirks = Quirks(),
) -> ProviderSpec:
    return ProviderSpec(
        name=name,
        family="openai",
        base_url=base_url,
        base_url_env=base_url_env or f"{name.upper()}_BASE_URL",
        key_env=key_env,
        key_required=not local,
        local=local,
        quirks=quirks,
    )


LLAMACPP_QUIRKS = Quirks(null_content_with_tool_calls=False)
"""llama-cpp-python's server (``--chat_format chatml-function-calling``) wants a string."""


PROVIDERS: dict[str, ProviderSpec] = {
    "openai": ProviderSpec("openai", "openai", None, "OPENAI_BASE_URL", "OPENAI_API_KEY"),
    "anthropic": ProviderSpec(
        "anthropic", "anthropic", None, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"
    ),
    "google": ProviderSpec("google", "google", None, "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"),
    "ollama": _spec("ollama", "http://localhost:11434/v1", None, local=True,
                    base_url_env="OLLAMA_HOST"),
    "llamacpp": _spec("llamacpp", "http://localhost:8080/v1", "LLAMACPP_API_KEY", local=True,
                      quirks=LLAMACPP_QUIRKS),
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
