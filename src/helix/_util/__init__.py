"""Private, domain-free helpers shared by every layer."""

from ._redact import MASK as MASK
from ._redact import redact as redact
from ._redact import secret_values as secret_values

__all__ = ["MASK", "redact", "secret_values"]
