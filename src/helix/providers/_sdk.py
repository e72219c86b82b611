"""Importing a provider's SDK only when a model of that provider is used."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from helix.errors import ConfigError

from ._provider import Family

SDKS: dict[Family, tuple[str, str]] = {
    "openai": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "google": ("google.genai", "google"),
}
"""Each family's SDK module and the extra that installs it (``openai`` is in the base)."""


def _missing(module: str, extra: str) -> ConfigError:
    return ConfigError(
        f"this model needs the {module!r} package: pip install 'helix-harness[{extra}]'"
    )


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise _missing(module, extra) from None


def require_installed(family: Family) -> None:
    """``ConfigError`` naming the install command unless the family's SDK is installed.

    Looks the module up without importing it (an SDK costs hundreds of ms to import).
    """
    module, extra = SDKS[family]
    try:
        found = importlib.util.find_spec(module)
    except ImportError:  # a parent package (``google``) is missing
        found = None
    if found is None:
        raise _missing(module, extra)
