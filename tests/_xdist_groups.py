"""``--dist loadgroup`` that works: tests of one ``xdist_group`` run on one worker.

pytest-xdist 3.8 groups tests by suffixing ``@GROUP`` to each grouped item's node id
(``item._nodeid``), which pytest 9 no longer reads (a node's id is ``item._id``): every
test would be scheduled on its own and, say, each worker would start a Ray cluster.
So the workers write down the group of each test they collected (a JSON file each, in a
folder the controller makes), and the controller's scheduler reads them: a group is one
unit of work, sent whole to one worker; any other test is a unit of its own.

Registered by tests/conftest.py; a plugin of its own so that its hooks run after the
conftest's (which puts tests in groups) and only where pytest-xdist is loaded.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

GROUPS_DIR = "helix_xdist_groups"
"""The ``workerinput`` key naming the folder a worker writes its groups to."""


def group_of(item: pytest.Item) -> str | None:
    """The item's ``xdist_group`` name (several joined, as pytest-xdist does), if any."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names)) if names else None


class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # untyped
    """Load scheduling by work unit: a group, or a test of no group."""

    def __init__(self, config: pytest.Config, log: Any, folder: Path) -> None:
        super().__init__(config, log)
        self.folder = folder
        self.groups: dict[str, str] = {}

    def schedule(self) -> None:
        if self.collection is None:  # the first time: every worker has collected
            for written in sorted(self.folder.glob("*.json")):
                self.groups.update(json.loads(written.read_text()))
        super().schedule()

    def _split_scope(self, nodeid: str) -> str:
        return self.groups.get(nodeid, nodeid)


class XdistGroups:
    """The hooks: the controller's folder and scheduler, the workers' files."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def _folder(self) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="helix-xdist-groups-"))
        return self.folder

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:  # the controller, nodes starting
        if node.config.getvalue("dist") == "loadgroup":
            node.workerinput[GROUPS_DIR] = str(self._folder())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        return GroupScheduling(config, log, self._folder())

    @pytest.hookimpl(trylast=True)  # after every hook that puts tests in groups
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        workerinput = getattr(config, "workerinput", None)
        if workerinput is None or GROUPS_DIR not in workerinput:
            return
        groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
        folder = Path(workerinput[GROUPS_DIR])
        written = folder / f"{workerinput['workerid']}.json"
        partial = written.with_suffix(".partial")
        partial.write_text(json.dumps(groups))
        partial.replace(written)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.folder is not None and not hasattr(config, "workerinput"):
            shutil.rmtree(self.folder, ignore_errors=True)
