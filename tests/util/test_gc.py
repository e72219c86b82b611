"""The collector settings ``helix serve`` uses for a process of many runs."""

from __future__ import annotations

import gc

from helix._util import MANY_RUNS_GC_THRESHOLD, tune_gc_for_many_runs


def test_tuning_collects_less_often_and_freezes_what_exists() -> None:
    before = gc.get_threshold()
    try:
        assert tune_gc_for_many_runs() == before
        assert gc.get_threshold() == MANY_RUNS_GC_THRESHOLD
        assert gc.get_threshold()[0] > before[0]
        assert gc.get_freeze_count() > 0
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    assert gc.get_freeze_count() == 0
