"""Tools: declared once, registered in a typed registry, executed through a sandbox."""

from ._builtin import BUILTIN_TOOLS as BUILTIN_TOOLS
from ._builtin import builtin_registry as builtin_registry
from ._tool import EffectKind as EffectKind
from ._tool import FileChange as FileChange
from ._tool import ToolContext as ToolContext
from ._tool import ToolDef as ToolDef
from ._tool import ToolFunction as ToolFunction
from ._tool import ToolRegistry as ToolRegistry
from ._tool import ToolResult as ToolResult
from ._tool import tool as tool

__all__ = [
    "BUILTIN_TOOLS",
    "EffectKind",
    "FileChange",
    "ToolContext",
    "ToolDef",
    "ToolFunction",
    "ToolRegistry",
    "ToolResult",
    "builtin_registry",
    "tool",
]
