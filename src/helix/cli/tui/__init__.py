"""``helix tui``: a Textual cockpit over the one door (``helix.api``).

A runs list with live status; a run's conversation and tool blocks; approvals and
steering from the keyboard; the world's files and diffs at any turn; fork, rollback,
pause, resume and cancel. Embedded (``LocalApi``, the runs it starts driven in its own
process, given a ``Driver``) or a server's client (``HttpApi``). See docs/tui.md.
It draws the blocks of the CLI's transcript (``_transcript.py``), as ``helix run`` does.
Needs the ``tui`` extra (Textual).
"""

from ._app import Driver as Driver
from ._app import HelixTui as HelixTui
from ._dialogs import ConfirmDialog as ConfirmDialog
from ._dialogs import ForkDialog as ForkDialog
from ._dialogs import NewRunDialog as NewRunDialog
from ._dialogs import RollbackDialog as RollbackDialog
from ._files_screen import FilesScreen as FilesScreen
from ._run_screen import RunScreen as RunScreen
from ._runs_screen import RunsScreen as RunsScreen

__all__ = [
    "ConfirmDialog",
    "Driver",
    "FilesScreen",
    "ForkDialog",
    "HelixTui",
    "NewRunDialog",
    "RollbackDialog",
    "RunScreen",
    "RunsScreen",
]
