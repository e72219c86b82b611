"""Private, domain-free helpers shared by every layer."""

from ._drivers import holder_gone as holder_gone
from ._drivers import new_holder as new_holder
from ._files import FileProblem as FileProblem
from ._files import first_problem as first_problem
from ._files import parse_structured as parse_structured
from ._files import read_structured as read_structured
from ._redact import MASK as MASK
from ._redact import redact as redact
from ._redact import secret_values as secret_values

__all__ = [
    "MASK",
    "FileProblem",
    "first_problem",
    "holder_gone",
    "new_holder",
    "parse_structured",
    "read_structured",
    "redact",
    "secret_values",
]
