"""The engineering pack: a Helix plugin for changing code in a git repository.

A blueprint enables it with ``plugins: [engineering]``. Each run then works in a git
worktree of its own on branch ``helix/<run id>`` (``_worktree``), with tools to run
the tests and read their failures (``run_tests``, ``triage_failures``), search code
by its syntax (``search_code``), refactor through libcst (``rename_symbol``,
``replace_function_body``) and hand the work over as a pushed branch with a review
summary (``deliver``); its gate asks a person before anything pushes or publishes
(``_gate``), and its components show test results and diffs. Installed as the
``engineering`` entry point of the ``helix.plugins`` group. See
docs/packs/engineering.md.
"""

from __future__ import annotations

from ._components import (
    COMPONENTS,
    DIFF_SCHEMA,
    TEST_RESULTS_SCHEMA,
    render_diff,
    render_test_results,
)
from ._deliver import review_summary
from ._gate import PublishGate, publishes
from ._git import GitError, Worktree, git_env, worktree_of
from ._junit import MAX_XML_BYTES, ReportError, parse_junit
from ._pack import TOOLS, VERSION, plugin
from ._pytest_text import MAX_OUTPUT_CHARS, parse_pytest_output
from ._refactor import rename_in, replace_body
from ._report import Failure, TestReport
from ._worktree import branch_for, prepare_world

__version__ = VERSION

__all__ = [
    "COMPONENTS",
    "DIFF_SCHEMA",
    "MAX_OUTPUT_CHARS",
    "MAX_XML_BYTES",
    "TEST_RESULTS_SCHEMA",
    "TOOLS",
    "VERSION",
    "Failure",
    "GitError",
    "PublishGate",
    "ReportError",
    "TestReport",
    "Worktree",
    "branch_for",
    "git_env",
    "parse_junit",
    "parse_pytest_output",
    "plugin",
    "prepare_world",
    "publishes",
    "rename_in",
    "render_diff",
    "render_test_results",
    "replace_body",
    "review_summary",
    "worktree_of",
]
