"""Sandboxes: where tool commands run, behind one interface."""

from ._process import ProcessSandbox as ProcessSandbox
from ._sandbox import DEFAULT_MAX_OUTPUT as DEFAULT_MAX_OUTPUT
from ._sandbox import CommandResult as CommandResult
from ._sandbox import Sandbox as Sandbox

__all__ = ["DEFAULT_MAX_OUTPUT", "CommandResult", "ProcessSandbox", "Sandbox"]
