"""Benchmarks: ``helix bench SUITE`` measures Helix against baselines run beside it."""

from ._figure import Figure as Figure
from ._suites import SUITES as SUITES
from ._suites import run_suite as run_suite

__all__ = ["SUITES", "Figure", "run_suite"]
