"""Generative UI: component kinds a tool can show, their schemas and their text forms.

A tool returns a component (``helix.tools.UiPart``: a kind's name and its props); the
runtime validates it here and records a ``ui.component`` event; the CLI, the TUI and
the dashboard draw each kind they know (docs/ui.md). Plugins add kinds with
``register_component``.
"""

from ._builtin import BUILTIN_KINDS as BUILTIN_KINDS
from ._builtin import CHOICE_ID as CHOICE_ID
from ._kinds import MAX_PROPS_BYTES as MAX_PROPS_BYTES
from ._kinds import MAX_PROPS_DEPTH as MAX_PROPS_DEPTH
from ._kinds import ComponentKind as ComponentKind
from ._kinds import component_kind as component_kind
from ._kinds import component_kinds as component_kinds
from ._kinds import register_component as register_component
from ._kinds import render_text as render_text
from ._kinds import unregister_component as unregister_component
from ._kinds import validate_component as validate_component

__all__ = [
    "BUILTIN_KINDS",
    "CHOICE_ID",
    "MAX_PROPS_BYTES",
    "MAX_PROPS_DEPTH",
    "ComponentKind",
    "component_kind",
    "component_kinds",
    "register_component",
    "render_text",
    "unregister_component",
    "validate_component",
]
