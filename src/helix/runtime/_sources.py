"""A run's tool sources: opened with its loop, their tools taken at turn boundaries.

The tools a run offers are its blueprint's built-ins plus what its sources (MCP
servers, plugins: ``helix.tools.ToolSource``) offer now. A source that says its tools
changed is read again at the next turn boundary: the model, the gates and the call
runner all see the new list from the next turn on, never half-way through one.
"""

from __future__ import annotations

from helix.errors import ToolSourceError
from helix.gates import build_gate_pipeline
from helix.kernel.events import NewEvent, Payload
from helix.plugins import PluginSource
from helix.providers import ModelAdapter
from helix.sandbox import policy_hook
from helix.tools import SourceHost, ToolRegistry, ToolSource, compose_tools

from ._session import LiveSession
from ._setup import RunSetup
from ._source_host import SourceServices


class RunSources:
    """The sources of one run's incarnation (``RunLoop`` opens and closes them)."""

    def __init__(self, setup: RunSetup) -> None:
        self.setup = setup
        self._base = setup.tools
        """The tools the run has of its own (the blueprint's built-ins)."""
        self._opened: list[ToolSource] = []
        self._changed: set[str] = set()

    async def open(self, session: LiveSession, model: ModelAdapter | None = None) -> None:
        """Open every source (in order); the run's tools are then theirs and the base.

        ``model`` (the run's) serves the sources' sampling requests. A source that fails
        to open closes those opened before it and raises ``ToolSourceError`` naming it.
        """
        host = self.host(session, model)
        for source in self.setup.sources:
            try:
                await source.open(host)
            except ToolSourceError:
                await self.close()
                raise
            except Exception as error:
                await self.close()
                raise ToolSourceError(
                    f"{source.name}: could not start: {type(error).__name__}: {error}"
                ) from error
            self._opened.append(source)
        self._changed.clear()
        self._take()

    def host(self, session: LiveSession, model: ModelAdapter | None = None) -> SourceHost:
        """What the run gives its sources: its world, sandbox, log, a person, its model.

        A source says its tools changed through ``changed``; it asks a person and has the
        run's model answer a prompt through ``SourceServices`` (``_source_host.py``).
        """

        async def record(payload: Payload) -> None:
            await session.append([NewEvent(payload, turn=session.state.turn)])

        network = self.setup.blueprint.sandbox.network
        services = SourceServices(self.setup, session, model)
        return SourceHost(
            run_id=self.setup.run_id,
            world=self.setup.world,
            sandbox=self.setup.sandbox,
            env=self.setup.env,
            record=record,
            changed=self._changed.add,
            # The run's egress lists, unlisted hosts refused (nobody is asked): a
            # source records the decisions itself (``mcp.egress.decided``).
            egress=policy_hook(self.setup.egress) if network else None,
            ask=services.ask,
            sample=services.sample if model is not None else None,
        )

    def refresh(self) -> bool:
        """At a turn boundary: take the sources' new tools if any said they changed."""
        if not self._changed:
            return False
        self._changed.clear()
        self._take()
        return True

    async def close(self) -> None:
        """Close every opened source, last opened first (errors closing are not raised)."""
        opened, self._opened = self._opened, []
        for source in reversed(opened):
            try:
                await source.close()
            except Exception:  # a source that fails to stop must not keep the run from ending
                continue

    def _take(self) -> None:
        if not self._opened:
            return
        tools = ToolRegistry(compose_tools(list(self._base), self._opened))
        self.setup.tools = tools
        # The gates of the run's plugins, as their serving versions declare them.
        extra = [g for s in self._opened if isinstance(s, PluginSource) for g in s.gates()]
        engine = self.setup.engine
        self.setup.pipeline = (
            engine.pipeline_for(tools, extra)
            if engine is not None
            else build_gate_pipeline(extra, available_tools=tools.names)
        )
