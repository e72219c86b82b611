"""Each public package re-exports a curated surface: ``__all__`` is exact."""

from __future__ import annotations

import importlib
import types

import pytest

PUBLIC = [
    "helix",
    "helix.api",
    "helix.bench",
    "helix.config",
    "helix.kernel.events",
    "helix.kernel.log",
    "helix.kernel.session",
    "helix.providers",
    "helix.testing",
    "helix.testing.conformance",
    "helix.world",
]


@pytest.mark.parametrize("name", PUBLIC)
def test_all_is_exact(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)  # ruff's RUF022 keeps it sorted
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"
    for attr in exported:
        assert hasattr(module, attr), f"{name}.__all__ names missing {attr}"
    public = {
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and not isinstance(value, types.ModuleType)
        and attr not in ("annotations",)
    }
    assert public <= set(exported), f"{name} leaks {sorted(public - set(exported))}"


@pytest.mark.parametrize("name", PUBLIC)
def test_nothing_private_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        if attr.startswith("__"):
            continue
        assert not attr.startswith("_"), f"{name} exports private {attr}"
        value = getattr(module, attr)
        origin = getattr(value, "__module__", None)
        if origin is not None and origin.startswith("helix"):
            assert origin.startswith(name.rsplit(".", 1)[0]), (attr, origin)
