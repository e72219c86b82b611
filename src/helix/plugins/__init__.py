"""Plugins: tools, gates, providers and components from outside Helix, with contracts.

A plugin declares what it provides and needs (``Plugin``); ``Plugins`` finds them
(entry points in the ``helix.plugins`` group, development folders), checks each
against its contract, activates those whose needs are met, and keeps folder plugins
current; a run gets the plugins its blueprint names through a ``PluginSource``.
See docs/plugins.md.
"""

from ._contract import check_plugin as check_plugin
from ._declare import Capabilities as Capabilities
from ._declare import Plugin as Plugin
from ._declare import PluginComponent as PluginComponent
from ._declare import WorldHook as WorldHook
from ._declare import WorldRequest as WorldRequest
from ._info import PluginChange as PluginChange
from ._info import PluginInfo as PluginInfo
from ._load import GROUP as GROUP
from ._registry import Plugins as Plugins
from ._source import PluginSource as PluginSource
from ._switches import disabled_plugins as disabled_plugins
from ._switches import set_disabled as set_disabled
from ._versions import satisfies as satisfies
from ._world import prepare_world as prepare_world

__all__ = [
    "GROUP",
    "Capabilities",
    "Plugin",
    "PluginChange",
    "PluginComponent",
    "PluginInfo",
    "PluginSource",
    "Plugins",
    "WorldHook",
    "WorldRequest",
    "check_plugin",
    "disabled_plugins",
    "prepare_world",
    "satisfies",
    "set_disabled",
]
