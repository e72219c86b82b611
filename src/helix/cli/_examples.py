"""Examples every command's help ends with: real invocations, keyed by command path."""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {}


def epilog(path: str) -> str | None:
    """The ``Examples:`` block for ``helix PATH --help`` (``""`` is ``helix`` itself)."""
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    # \b keeps Click from re-wrapping the block into one paragraph.
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)
