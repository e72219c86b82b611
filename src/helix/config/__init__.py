"""Configuration from the environment."""

from ._settings import Settings as Settings

__all__ = ["Settings"]
