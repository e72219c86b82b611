"""From a model name (``provider:model``) or a fallback list to a ready adapter."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence

from helix.errors import ModelNameError

from ._adapter import ModelAdapter
from ._fallback import FallbackModel
from ._provider import PROVIDERS, Connection
from ._retry import FailureHook, RetryingModel, RetryPolicy
from ._scripted import ScriptedModel
from ._scripts import ScriptAccess, locate_script, read_script
from ._sdk import require_installed

ModelSpec = str | Sequence[str]
"""One model name, or a fallback chain of them."""

_SPECIAL = ("scripted", "local")

ModelOpener = Callable[[str], ModelAdapter]
"""Makes the adapter for the model part of ``provider:model`` (an in-process provider)."""

_IN_PROCESS: dict[str, ModelOpener] = {}
_PROVIDER_NAME = re.compile(r"[a-z][a-z0-9_.-]*")


def register_provider(name: str, opener: ModelOpener) -> None:
    """Make ``name:MODEL`` open ``opener(MODEL)`` in this process (a model object of yours).

    The name is a new provider (lowercase, no colon), never a built-in one; registering
    it again replaces its opener. It lives in this process only: another process (a
    ``helix resume`` from the shell) does not know it and refuses the name.
    """
    if not _PROVIDER_NAME.fullmatch(name):
        raise ModelNameError(
            f"invalid provider name {name!r}: lowercase letters, digits, '.', '_' or '-'"
        )
    if name in PROVIDERS or name in _SPECIAL:
        raise ModelNameError(f"{name!r} is a built-in provider: choose another name")
    _IN_PROCESS[name] = opener


def unregister_provider(name: str) -> None:
    """Forget an in-process provider (nothing happens if it is not registered)."""
    _IN_PROCESS.pop(name, None)


def parse_model_name(name: str) -> tuple[str, str]:
    """Split ``provider:model``; ``ModelNameError`` explains a malformed or unknown name."""
    provider, sep, model = name.partition(":")
    provider = provider.strip().lower()
    if not sep or not provider or not model.strip():
        raise ModelNameError(
            f"invalid model name {name!r}: use provider:model, e.g. openai:gpt-4.1,"
            " anthropic:claude-sonnet-4-5 or ollama:qwen2.5-coder:7b"
        )
    if provider not in PROVIDERS and provider not in _SPECIAL and provider not in _IN_PROCESS:
        known = ", ".join([*PROVIDERS, *_SPECIAL, *_IN_PROCESS])
        raise ModelNameError(f"unknown provider {provider!r} in {name!r}: choose from {known}")
    return provider, model.strip()


def check_model(name: str, *, scripts: ScriptAccess = True) -> None:
    """``ModelNameError`` unless ``name`` is well formed and, if scripted, ``scripts`` allows it."""
    provider, model = parse_model_name(name)
    if provider == "scripted" and scripts is not True:
        locate_script(model, scripts)


def check_usable(
    name: str, *, env: Mapping[str, str] | None = None, scripts: ScriptAccess = True
) -> None:
    """``ConfigError`` unless a run here could open ``name``: nothing is imported or called.

    Beyond ``check_model``: the provider's SDK is installed (else the message names the
    ``pip install 'helix-harness[EXTRA]'`` command) and its key is set in ``env``
    (``MissingKeyError`` names the variable; local servers need none, only their
    address, which has a default). ``local:MODEL`` is resolved when the run starts (it
    asks the local servers); only its SDK is checked here.
    """
    check_model(name, scripts=scripts)
    provider, _ = parse_model_name(name)
    if provider in _IN_PROCESS or provider == "scripted":
        return
    if provider == "local":
        require_installed("openai")  # every local server speaks the OpenAI dialect
        return
    spec = PROVIDERS[provider]
    require_installed(spec.family)
    spec.connect(os.environ if env is None else env)


def open_model(
    name: str,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    scripts: ScriptAccess = True,
) -> ModelAdapter:
    """Build the adapter for one model name (no retries: see ``build_model``).

    ``scripts`` says which scenario files a ``scripted:PATH`` model may read.
    """
    env = os.environ if env is None else env
    provider, model = parse_model_name(name)
    if provider in _IN_PROCESS:
        return _IN_PROCESS[provider](model)
    if provider == "scripted":
        return ScriptedModel(read_script(model, scripts), label=model)
    if provider == "local":
        from ._local import resolve_local

        return open_model(resolve_local(model, env=env), env=env, timeout=timeout, scripts=scripts)
    connection = PROVIDERS[provider].connect(env)
    return adapter_for(connection, model, timeout=timeout)


def adapter_for(connection: Connection, model: str, *, timeout: float = 120.0) -> ModelAdapter:
    """Return the adapter of the connection's family."""
    if connection.family == "openai":
        from ._openai import OpenAIChatAdapter

        return OpenAIChatAdapter(connection, model, timeout=timeout)
    if connection.family == "anthropic":
        from ._anthropic import AnthropicAdapter

        return AnthropicAdapter(connection, model, timeout=timeout)
    from ._google import GoogleAdapter

    return GoogleAdapter(connection, model, timeout=timeout)


def build_model(
    spec: ModelSpec,
    *,
    policy: RetryPolicy | None = None,
    on_failure: FailureHook | None = None,
    env: Mapping[str, str] | None = None,
    scripts: ScriptAccess = True,
) -> ModelAdapter:
    """Build what a run calls: each model with retries, a list as a fallback chain."""
    names = [spec] if isinstance(spec, str) else list(spec)
    if not names:
        raise ModelNameError("no model given: name one, e.g. openai:gpt-4.1")
    models = [
        RetryingModel(open_model(n, env=env, scripts=scripts), policy, on_failure=on_failure)
        for n in names
    ]
    return models[0] if len(models) == 1 else FallbackModel(models)


ROLES = ("main", "summary", "judge", "planner", "worker")
"""The roles a blueprint may give models of their own (``roles:``, docs/models.md)."""

ROLE_ALIASES = {"default": "main", "summarizer": "summary"}
"""Older names of roles, still accepted: ``default`` is ``main``, ``summarizer`` ``summary``."""


def role_name(role: str) -> str:
    """The role's current name (an older one is translated); ``ModelNameError`` if unknown."""
    name = ROLE_ALIASES.get(role, role)
    if name not in ROLES:
        known = ", ".join([*ROLES, *ROLE_ALIASES])
        raise ModelNameError(f"unknown role {role!r}: choose from {known}")
    return name


def model_for_role(roles: Mapping[str, ModelSpec], role: str) -> ModelSpec:
    """Return the model for ``role``: its own if ``roles`` names one, else ``main``'s.

    Older names are accepted, as keys of ``roles`` and as ``role``.
    """
    wanted = role_name(role)
    named = {role_name(key): spec for key, spec in roles.items()}
    if wanted in named:
        return named[wanted]
    if "main" in named:
        return named["main"]
    raise ModelNameError(f"no model for role {role!r} and no main model")
