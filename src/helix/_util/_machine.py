"""What this machine offers, as a node's resources."""

from __future__ import annotations

import contextlib
import os


def machine_resources() -> dict[str, float]:
    """This machine's cores and memory (bytes), as a node's resources."""
    resources = {"CPU": float(os.cpu_count() or 1)}
    with contextlib.suppress(ValueError, OSError, AttributeError):  # not every system says
        resources["memory"] = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return resources
