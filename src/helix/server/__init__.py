"""The control-plane server: REST and WebSocket API, accounts, the web dashboard."""

from ._app import create_app as create_app
from ._config import ServerConfig as ServerConfig
from ._config import parse_forwarded_allow_ips as parse_forwarded_allow_ips
from ._state import open_server_engine as open_server_engine

__all__ = ["ServerConfig", "create_app", "open_server_engine", "parse_forwarded_allow_ips"]
