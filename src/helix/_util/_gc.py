"""Garbage collection for a process that holds many live runs at once (``helix serve``).

CPython's cyclic collector runs a young collection every 700 net allocations and, now
and then, scans every tracked object. A process driving thousands of runs holds
hundreds of megabytes of long-lived objects (each run's state, tasks, buffers) and
allocates briskly on every turn, so those scans add up: at 3,000 runs of 3 turns
measured here, 28 s of CPU with the defaults, 20 s with these thresholds
(``helix bench distributed``, ``concurrent_runs_10k``, docs/benchmarks.md).
"""

from __future__ import annotations

import gc

MANY_RUNS_GC_THRESHOLD = (50_000, 20, 100)
"""Young collections every 50,000 net allocations, older ones rarer."""


def tune_gc_for_many_runs() -> tuple[int, int, int]:
    """Collect less often, and leave what exists now (imports, settings) out of scans.

    Returns the thresholds it replaced (``gc.set_threshold(*old)`` and ``gc.unfreeze()``
    undo it).
    """
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*MANY_RUNS_GC_THRESHOLD)
    return previous
