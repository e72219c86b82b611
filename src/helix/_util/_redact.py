"""Keeping secrets out of anything a person or a log will read."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

_SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET|PASSWORD|_PASS)$", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"://[^/:@\s]*:([^@\s/]+)@")
_MIN_SECRET_LEN = 6
MASK = "[redacted]"


def secret_values(env: Mapping[str, str] | None = None) -> list[str]:
    """Secrets in the environment, as found by name and by shape.

    Values of variables named like secrets (``*_KEY``, ``*_TOKEN``, …), and passwords
    inside URLs (``postgresql://user:PASSWORD@host/db``) whatever the variable's name.
    """
    env = os.environ if env is None else env
    found = [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET_LEN]
    for value in env.values():
        if "://" in value and "@" in value:
            match = _URL_PASSWORD.search(value)
            if match is not None and len(match.group(1)) >= _MIN_SECRET_LEN:
                found.append(match.group(1))
    return found


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
