"""The pack's declaration: its tools, gate, components and world hook, as one ``Plugin``."""

from __future__ import annotations

from helix.plugins import Plugin

from ._components import COMPONENTS
from ._deliver import deliver
from ._gate import PublishGate
from ._refactor import rename_symbol, replace_function_body
from ._search import search_code
from ._tests import run_tests, triage_failures
from ._worktree import prepare_world

VERSION = "0.1.0"
TOOLS = (run_tests, triage_failures, search_code, rename_symbol, replace_function_body, deliver)

plugin = Plugin(
    name="engineering",
    version=VERSION,
    helix=">=0.1",
    tools=TOOLS,
    gates=(PublishGate(),),
    components=COMPONENTS,
    prepare_world=prepare_world,
)
