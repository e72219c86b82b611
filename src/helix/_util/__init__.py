"""Private, domain-free helpers shared by every layer."""

from ._driver_locks import DriverLocks as DriverLocks
from ._driver_locks import LockHeld as LockHeld
from ._files import FileProblem as FileProblem
from ._files import first_problem as first_problem
from ._files import parse_structured as parse_structured
from ._files import read_structured as read_structured
from ._redact import MASK as MASK
from ._redact import redact as redact
from ._redact import secret_values as secret_values

__all__ = [
    "MASK",
    "DriverLocks",
    "FileProblem",
    "LockHeld",
    "first_problem",
    "parse_structured",
    "read_structured",
    "redact",
    "secret_values",
]
