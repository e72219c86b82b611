"""What ``helix init`` checks on this host: a provider's key, a local server's models.

One short authenticated request each (``GET …/models``), with the standard library
so that it needs no provider SDK. A key is sent only to its provider's address and
never printed; a local server is reached without any HTTP proxy (it is on this machine
or network).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from helix.providers import LOCAL_KEY, PROVIDERS

TIMEOUT_S = 5.0
"""How long a check waits for an answer."""
_MAX_BODY = 8 * 2**20
_DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "google": "https://generativelanguage.googleapis.com",
}
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class CheckFailed(Exception):
    """A check's answer, in words fit to print (never holding a key)."""


@dataclass(frozen=True, slots=True)
class Listed:
    """A local server's answer: its address and the models it serves."""

    url: str
    models: tuple[str, ...]


def key_variable(provider: str) -> str | None:
    """The variable holding ``provider``'s key, if it needs one."""
    spec = PROVIDERS.get(provider)
    return spec.key_env if spec is not None and spec.key_required else None


def verify_key(provider: str, env: Mapping[str, str], *, timeout: float = TIMEOUT_S) -> str:
    """List the provider's models with the key in ``env``: one cheap authenticated call.

    Returns the URL asked; ``CheckFailed`` says why the key was not accepted.
    """
    spec = PROVIDERS[provider]
    if spec.key_env is None or not env.get(spec.key_env):
        raise CheckFailed(f"{spec.key_env or 'the key'} is not set")
    connection = spec.connect(env)
    base = (connection.base_url or _DEFAULT_URLS[connection.family]).rstrip("/")
    key = connection.api_key
    if connection.family == "anthropic":
        url = base + "/v1/models"
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    elif connection.family == "google":
        url, headers = base + "/v1beta/models", {"x-goog-api-key": key}
    else:
        url, headers = base + "/models", {"Authorization": f"Bearer {key}"}
    try:
        _get(urllib.request.build_opener(), url, headers, timeout)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code in (401, 403):
            raise CheckFailed(
                f"{provider} refused the key in {spec.key_env} (HTTP {error.code} from {url})"
            ) from None
        raise CheckFailed(f"{url} answered HTTP {error.code}") from None
    except (OSError, ValueError) as error:
        raise CheckFailed(f"cannot reach {url}: {_why(error)}") from None
    return url


def list_models(
    provider: str, base_url: str, env: Mapping[str, str], *, timeout: float = TIMEOUT_S
) -> Listed:
    """The models an OpenAI-compatible local server lists at ``base_url/models``.

    ``CheckFailed`` if it cannot be reached or does not answer with a model list.
    """
    spec = PROVIDERS[provider]
    key = env.get(spec.key_env) if spec.key_env else None
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {key}"} if key and key != LOCAL_KEY else {}
    try:
        body = _get(_DIRECT, url, headers, timeout)
        entries = body["data"] or []  # a server with no model may say null
        names = tuple(str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id"))
    except urllib.error.HTTPError as error:
        error.close()
        raise CheckFailed(f"{url} answered HTTP {error.code}") from None
    except (KeyError, TypeError, ValueError):
        raise CheckFailed(f"{url} answered, but not with a model list") from None
    except OSError as error:
        raise CheckFailed(f"cannot reach {url}: {_why(error)}") from None
    return Listed(url, names)


def check_base_url(url: str) -> str:
    """``url`` if it is an ``http(s)://host…`` address; ``ValueError`` says why not."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) address, e.g. http://127.0.0.1:8080/v1")
    if parts.username or parts.password:
        raise ValueError("give the address without a user or password in it")
    return url.rstrip("/")


def base_url_setting(provider: str, base_url: str) -> tuple[str, str]:
    """The variable (and its value) that points ``provider`` at ``base_url``."""
    spec = PROVIDERS[provider]
    assert spec.base_url_env is not None
    if spec.base_url_env == "OLLAMA_HOST":  # a host, whose OpenAI-compatible API is at /v1
        return spec.base_url_env, base_url.removesuffix("/v1")
    return spec.base_url_env, base_url


def _get(
    opener: urllib.request.OpenerDirector, url: str, headers: dict[str, str], timeout: float
) -> Any:
    request = urllib.request.Request(url, headers={"Accept": "application/json", **headers})
    with opener.open(request, timeout=timeout) as answer:
        return json.loads(answer.read(_MAX_BODY))


def _why(error: BaseException) -> str:
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, TimeoutError):
        return "timed out"
    return str(reason) or type(reason).__name__
