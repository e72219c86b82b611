"""The control-plane server: REST and WebSocket API, accounts, the web dashboard."""

from ._app import create_app as create_app
from ._config import ServerConfig as ServerConfig

__all__ = ["ServerConfig", "create_app"]
