"""A blueprint's ``placement``: checked field by field, refused by an engine that cannot place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helix.errors import BlueprintError, ConfigError
from helix.kernel.log import MemoryEventStore
from helix.runtime import Blueprint, Engine


def test_a_placement_is_typed() -> None:
    blueprint = Blueprint.parse(
        {
            "placement": {
                "labels": {"gpu": "yes", "example.com/zone": "eu-1"},
                "resources": {"GPU": 1},
            }
        },
        source="b.yaml",
    )
    assert blueprint.placement is not None
    assert blueprint.placement.resources == {"GPU": 1.0}
    assert (
        blueprint.placement.describe() == "labels example.com/zone=eu-1, gpu=yes; resources GPU=1"
    )
    assert Blueprint.parse({}, source="b.yaml").placement is None


@pytest.mark.parametrize(
    ("placement", "message"),
    [
        ({"labels": {"gpu": "y s"}}, "placement.labels: .*'y s' is not a label value"),
        ({"labels": {"-gpu": "yes"}}, "placement.labels: .*'-gpu' is not a label name"),
        ({"labels": {"gpu": "!yes"}}, "placement.labels: .*'!yes' is not a label value"),
        ({"labels": {"gpu": 1}}, "placement.labels.gpu: Input should be a valid string"),
        ({"resources": {"GPU": 0}}, "placement.resources: .*GPU: 0.0 is not a positive number"),
        ({"resources": {"GPU": "inf"}}, "placement.resources: .*GPU: inf is not a positive"),
        ({"resources": {"a b": 1}}, "placement.resources: .*'a b' is not a resource name"),
        ({"zone": "eu"}, "placement.zone: Extra inputs are not permitted"),
        ("gpu", "placement: Input should be a valid dictionary"),
    ],
)
def test_a_bad_placement_names_its_field(placement: Any, message: str) -> None:
    with pytest.raises(BlueprintError, match=f"^b.yaml: {message}"):
        Blueprint.parse({"placement": placement}, source="b.yaml")


async def test_an_engine_without_a_placer_refuses_a_placed_run(tmp_path: Path) -> None:
    engine = Engine(MemoryEventStore(), home=tmp_path / "home", env={})
    blueprint = Blueprint(model="scripted:t", placement={"labels": {"gpu": "yes"}})
    with pytest.raises(
        ConfigError, match="does not place tools on nodes; run it with the ray executor"
    ):
        await engine.create("x", blueprint=blueprint, world=tmp_path)
    assert (await engine.store.list_runs()).runs == []
