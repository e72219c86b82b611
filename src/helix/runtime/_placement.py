"""Placing a run's commands on other nodes: the blueprint's ``placement`` and the seam.

A blueprint may ask for its commands to run on a node of a cluster that has some
labels and resources (``placement: {labels: {gpu: "yes"}, resources: {GPU: 1}}``).
The runtime knows no cluster: an engine is given a ``Placer`` (``Engine(placer=…)``,
``helix.distributed.RayPlacer`` for a Ray cluster) that turns the placement into the
``Sandbox`` the run's commands go through. An engine without one refuses such a run
(``ConfigError``) rather than run its commands here.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from helix.errors import ConfigError
from helix.sandbox import Sandbox

if TYPE_CHECKING:
    from ._blueprint import Blueprint

_LABEL_NAME = r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = re.compile(rf"^([a-z0-9]([a-z0-9.-]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}$")
_LABEL_VALUE = re.compile(rf"^({_LABEL_NAME})?$")
_RESOURCE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:/-]{0,127}$")


class Placement(BaseModel):
    """Which nodes may run a run's commands: each label equal, each resource there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: dict[str, str] = Field(default_factory=dict[str, str])
    """Node labels that must all match exactly (``gpu: "yes"``, ``zone: eu-1``).

    Keys are ``[prefix/]name``, values a name or empty: letters, digits, ``-``, ``_``,
    ``.``, at most 63 characters, starting and ending with a letter or digit."""
    resources: dict[str, float] = Field(default_factory=dict[str, float])
    """Resources each command holds while it runs (``GPU: 1``, ``CPU: 2``, custom
    ones): positive numbers; a node must have at least this much in total."""

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str]) -> dict[str, str]:
        for key, value in labels.items():
            if not _LABEL_KEY.match(key):
                raise ValueError(
                    f"{key!r} is not a label name ([prefix/]name: letters, digits, '-', '_',"
                    " '.', at most 63 characters, starting and ending with a letter or digit)"
                )
            if not _LABEL_VALUE.match(value):
                raise ValueError(
                    f"label {key}: {value!r} is not a label value (letters, digits, '-', '_',"
                    " '.', at most 63 characters, starting and ending with a letter or digit)"
                )
        return labels

    @field_validator("resources")
    @classmethod
    def _resources(cls, resources: dict[str, float]) -> dict[str, float]:
        for name, amount in resources.items():
            if not _RESOURCE.match(name):
                raise ValueError(f"{name!r} is not a resource name (GPU, CPU, memory, custom)")
            if not (amount > 0 and math.isfinite(amount)):
                raise ValueError(f"resource {name}: {amount!r} is not a positive number")
        return resources

    def describe(self) -> str:
        """``labels gpu=yes; resources GPU=1`` (for messages and ``tool.started.reason``)."""
        parts = []
        if self.labels:
            parts.append("labels " + ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items())))
        if self.resources:
            held = ", ".join(f"{k}={v:g}" for k, v in sorted(self.resources.items()))
            parts.append("resources " + held)
        return "; ".join(parts) or "any node"


class Placer(Protocol):
    """Gives the sandbox a placed run's commands run in (``Engine(placer=…)``).

    Called when a run whose blueprint has a ``placement`` is created (to refuse one no
    node could take, before anything is logged) and each time its loop starts.
    """

    def place(self, run_id: str | None, blueprint: Blueprint) -> Sandbox:
        """The sandbox for the run's commands; ``ConfigError`` if no node can take them.

        ``run_id`` is ``None`` when the run is being created (a check only).
        """
        ...


NO_PLACER = (
    "the blueprint places its commands on nodes (placement: {what}), but this engine does"
    " not place tools on nodes; run it with the ray executor"
)


def placed_sandbox(
    placer: Placer | None, run_id: str | None, blueprint: Blueprint, default: Sandbox
) -> Sandbox:
    """The sandbox of a run: ``default`` unless its blueprint places its commands."""
    if blueprint.placement is None:
        return default
    if placer is None:
        raise ConfigError(NO_PLACER.format(what=blueprint.placement.describe()))
    return placer.place(run_id, blueprint)
