"""Importing a provider's SDK only when a model of that provider is used."""

from __future__ import annotations

import importlib
from types import ModuleType

from helix.errors import ConfigError


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"this model needs the {module!r} package: pip install 'helix-harness[{extra}]'"
        ) from None
