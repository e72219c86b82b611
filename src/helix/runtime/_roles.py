"""Models by role: which model serves each kind of call a run makes.

A blueprint's ``roles:`` maps ``main`` (the run's own turns), ``summary`` (context
compaction), ``judge`` (a tree of thoughts' judge runs), ``planner`` (a
``plan_then_act`` run's planning turn) and ``worker`` (delegated children, a graph's
tasks) to a model or a fallback chain (docs/models.md#roles). A role with no model of
its own is served by the run's main model. ``RoleModels`` opens each role's model the
first time the run needs it, and closes them all with the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from helix._util import close_fully
from helix.providers import ModelAdapter, ModelFailure, ModelSpec, ScriptAccess, build_model

from ._blueprint import Blueprint

MAIN = "main"


def main_model(blueprint: Blueprint, model: ModelSpec | None) -> str | tuple[str, ...] | None:
    """The run's main model: ``model`` (a run's own), else ``roles.main``, else ``model``."""
    spec = model or blueprint.role_model(MAIN)
    return spec if isinstance(spec, str) or spec is None else tuple(spec)


def resolved(blueprint: Blueprint, main: str | tuple[str, ...] | None) -> Blueprint:
    """The blueprint a run keeps: ``main`` as its ``model``, ``roles`` without ``main``."""
    roles = {role: spec for role, spec in blueprint.roles.items() if role != MAIN}
    return blueprint.model_copy(update={"model": main, "roles": roles})


def role_names(blueprint: Blueprint) -> list[str]:
    """Every model name the blueprint's roles (but ``main``) name, for checking."""
    names: list[str] = []
    for role, spec in blueprint.roles.items():
        if role != MAIN:
            names += [spec] if isinstance(spec, str) else list(spec)
    return list(dict.fromkeys(names))


def worker_model(parent: Blueprint, own: ModelSpec | None) -> str | tuple[str, ...] | None:
    """A child's model: its own (``own``), else its parent's ``worker``, else its main."""
    spec = own or parent.roles.get("worker") or parent.model
    return spec if isinstance(spec, str) or spec is None else tuple(spec)


class RoleModels:
    """The models of one run's roles, each opened once, when first needed."""

    def __init__(
        self,
        roles: Mapping[str, ModelSpec],
        *,
        on_failure: Callable[[ModelFailure], Awaitable[None]],
        env: Mapping[str, str],
        scripts: ScriptAccess,
    ) -> None:
        self._roles = roles
        self._on_failure = on_failure
        self._env = env
        self._scripts = scripts
        self._open: dict[str, ModelAdapter] = {}

    def has(self, role: str) -> bool:
        """Whether ``role`` has a model of its own (else the main model serves it)."""
        return role != MAIN and role in self._roles

    def get(self, role: str, main: ModelAdapter) -> ModelAdapter:
        """The model serving ``role``: its own (opened now if not yet), else ``main``."""
        if not self.has(role):
            return main
        if role not in self._open:
            self._open[role] = build_model(
                self._roles[role], on_failure=self._on_failure, env=self._env, scripts=self._scripts
            )
        return self._open[role]

    async def aclose(self) -> None:
        """Close every role model opened (their connections, even if cancelled again)."""
        opened, self._open = list(self._open.values()), {}
        for model in opened:
            await close_fully(model.aclose())
