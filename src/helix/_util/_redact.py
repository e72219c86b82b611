"""Keeping secrets out of anything a person or a log will read."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET|PASSWORD|_PASS)$", re.IGNORECASE)
_MIN_SECRET_LEN = 6
MASK = "[redacted]"


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables named like secrets (``*_KEY``, ``*_TOKEN``, …)."""
    env = os.environ if env is None else env
    return [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LEN]


def redact(text: str, secrets: Iterable[str] = (), *, scan_env: bool = True) -> str:
    """Replace every known secret value in ``text`` (and in the environment) with a mask.

    Longer secrets first, so a secret that contains another is masked whole. Callers
    that redact often pass the environment's secrets themselves and ``scan_env=False``.
    """
    found = secret_values() if scan_env else []
    candidates = {s for s in (*secrets, *found) if s and len(s) >= _MIN_SECRET_LEN}
    for secret in sorted(candidates, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
