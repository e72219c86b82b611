"""Private, domain-free helpers shared by every layer."""

from ._closing import close_fully as close_fully
from ._drivers import holder_gone as holder_gone
from ._drivers import holder_process as holder_process
from ._drivers import new_holder as new_holder
from ._files import FileProblem as FileProblem
from ._files import first_problem as first_problem
from ._files import parse_structured as parse_structured
from ._files import read_structured as read_structured
from ._gc import MANY_RUNS_GC_THRESHOLD as MANY_RUNS_GC_THRESHOLD
from ._gc import tune_gc_for_many_runs as tune_gc_for_many_runs
from ._machine import machine_resources as machine_resources
from ._ports import free_port as free_port
from ._procs import boot_time as boot_time
from ._procs import proc_stat as proc_stat
from ._procs import process_gone as process_gone
from ._procs import process_mark as process_mark
from ._procs import start_ticks as start_ticks
from ._redact import MASK as MASK
from ._redact import redact as redact
from ._redact import secret_values as secret_values

__all__ = [
    "MANY_RUNS_GC_THRESHOLD",
    "MASK",
    "FileProblem",
    "boot_time",
    "close_fully",
    "first_problem",
    "free_port",
    "holder_gone",
    "holder_process",
    "machine_resources",
    "new_holder",
    "parse_structured",
    "proc_stat",
    "process_gone",
    "process_mark",
    "read_structured",
    "redact",
    "secret_values",
    "start_ticks",
    "tune_gc_for_many_runs",
]
