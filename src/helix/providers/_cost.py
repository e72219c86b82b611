"""What a model call cost, from a maintained price list (``genai-prices``).

Prices come from the ``genai-prices`` snapshot shipped with the package (no network),
overridable per model. A model whose price is unknown costs ``None``, never a guess,
and is warned about once. Local servers and scripted models cost nothing.
"""

from __future__ import annotations

import json
import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from helix.errors import ConfigError

from ._provider import PROVIDERS
from ._types import TokenUsage

_log = logging.getLogger(__name__)

# Helix's provider names where genai-prices spells them differently.
_PRICE_PROVIDER = {"xai": "x-ai"}
_FREE = {"scripted", *(name for name, spec in PROVIDERS.items() if spec.local)}


@dataclass(frozen=True, slots=True)
class Price:
    """A price per million tokens, in USD."""

    input: float
    output: float
    cached_input: float | None = None
    """For input tokens served from the provider's cache; the input price if not given."""

    def cost(self, usage: TokenUsage) -> float:
        """Return the cost of ``usage`` at this price."""
        cached = usage.cached_tokens or 0
        cached_price = self.input if self.cached_input is None else self.cached_input
        fresh = max(0, usage.input_tokens - cached)
        total = fresh * self.input + cached * cached_price + usage.output_tokens * self.output
        return total / 1_000_000


class PriceBook:
    """Prices by ``provider:model``: overrides first, then genai-prices."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self.overrides = dict(overrides or {})
        self._warned: set[str] = set()

    @classmethod
    def from_file(cls, path: str | Path) -> PriceBook:
        """Read overrides from TOML or JSON: ``provider:model = {input, output, cached_input}``."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
            return cls({name: Price(**entry) for name, entry in data.items()})
        except (OSError, ValueError, TypeError) as error:
            raise ConfigError(
                f"cannot read prices from {path}: {error} (expected provider:model ="
                " {input = …, output = …} in USD per million tokens)"
            ) from None

    def with_overrides(self, overrides: Mapping[str, Price]) -> PriceBook:
        """This book with ``overrides`` on top (a blueprint's own prices, say)."""
        if not overrides:
            return self
        return PriceBook({**self.overrides, **overrides})

    def knows(self, provider: str, model: str) -> bool:
        """Whether a call to ``provider:model`` can be priced (free counts as priced)."""
        if f"{provider}:{model}" in self.overrides or provider in _FREE:
            return True
        try:
            from genai_prices import Usage, calc_price

            calc_price(
                Usage(input_tokens=1, output_tokens=1),
                model_ref=model,
                provider_id=_PRICE_PROVIDER.get(provider, provider),
            )
        except (LookupError, ImportError):
            return False
        return True

    def cost(self, provider: str, model: str, usage: TokenUsage) -> float | None:
        """USD for one call, or ``None`` (and one warning) if the price is unknown."""
        name = f"{provider}:{model}"
        override = self.overrides.get(name)
        if override is not None:
            return override.cost(usage)
        if provider in _FREE:
            return 0.0
        try:
            from genai_prices import Usage, calc_price

            priced = calc_price(
                Usage(
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    cache_read_tokens=usage.cached_tokens,
                ),
                model_ref=model,
                provider_id=_PRICE_PROVIDER.get(provider, provider),
            )
        except (LookupError, ImportError) as error:
            if name not in self._warned:
                self._warned.add(name)
                _log.warning(
                    "no price known for %s (%s): its cost is recorded as null", name, error
                )
            return None
        return float(priced.total_price)
