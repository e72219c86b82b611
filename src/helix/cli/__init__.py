"""The ``helix`` command line."""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``helix`` console script."""
    from ._app import app

    app()


__all__ = ["main"]
