"""Stored blueprints through the one door: ``BlueprintDoor`` and ``LocalApi``'s side.

A workspace's stored blueprints live in the account store (the database ``HELIX_DB``
names): every save is a new version (1, 2, 3…) with who saved it, when and a note; old
versions are kept. A save made on a version that is no longer the latest is refused
(``StaleBlueprintVersionError``, HTTP 409); a rollback saves an old version's fields as
the next version (history is never rewritten). A run made from a stored blueprint
records the version it used (``run.created.blueprint_version``). ``HttpApi``'s side is
in ``_blueprint_http.py``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from helix.errors import ConfigError, ConflictError, NotFoundError

from ._blueprint_models import BlueprintDiff, BlueprintInfo, BlueprintVersion, blueprint_diff

if TYPE_CHECKING:
    from helix.accounts import AccountStore, StoredBlueprint
    from helix.kernel.log import EventStore, RunRecord
    from helix.runtime import Blueprint, Engine

AccountsSource: TypeAlias = "AccountStore | Callable[[], Awaitable[AccountStore]]"
"""The account store holding stored blueprints, or a function opening it when first needed."""
NOTE_LIMIT = 200
"""The longest note a save takes (one line)."""


class BlueprintDoor(Protocol):
    """What a client can do with a workspace's stored blueprints (``HelixApi`` includes it)."""

    async def blueprints(self, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """The workspace's stored blueprints, each at its latest version, by name."""
        ...

    async def blueprint(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> BlueprintVersion:
        """One version with its fields (default: the latest); ``NotFoundError`` if none."""
        ...

    async def save_blueprint(
        self,
        name: str,
        blueprint: Blueprint | dict[str, Any],
        *,
        expected_version: int | None = None,
        note: str | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Store ``blueprint`` (checked as a blueprint file is) as the next version of ``name``.

        Its name is ``name``, whatever its fields say. ``expected_version``: the version
        the edit was made on (``0``: the name must be new); if it is not the latest,
        ``StaleBlueprintVersionError`` (409, ``stale_blueprint_version``). ``None``: on
        top of the latest. ``note``: one line (at most 200 characters). A bad blueprint:
        ``BlueprintError`` (422) naming the field.
        """
        ...

    async def blueprint_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[BlueprintInfo]:
        """Every version, oldest first: who saved it, when, its note (no fields)."""
        ...

    async def blueprint_diff(
        self, name: str, a: int, b: int, *, workspace: str | None = None
    ) -> BlueprintDiff:
        """Version ``a`` to version ``b``: their canonical YAML's unified diff, fields changed."""
        ...

    async def rollback_blueprint(
        self,
        name: str,
        version: int,
        *,
        expected_version: int | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Save version ``version``'s fields as the next version, noted ``rollback to vN``."""
        ...


def split_stored(spec: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@N`` (a version of a stored blueprint) as the name and version."""
    name, at, tail = spec.rpartition("@")
    if not at:
        return spec, None
    if not tail.isdigit() or int(tail) < 1:
        raise ConfigError(f"invalid blueprint version in {spec!r}: NAME@N, N a number from 1")
    return name, int(tail)


def is_blueprint_file(spec: str) -> bool:
    """Whether a blueprint string is a path to a file here, not a stored blueprint's name.

    It is if the file exists, or the string has a folder or a ``.yaml``, ``.yml``,
    ``.toml`` or ``.json`` suffix.
    """
    path = Path(spec).expanduser()
    pathy = len(path.parts) > 1 or path.suffix in (".yaml", ".yml", ".toml", ".json")
    return pathy or path.is_file()


async def recorded_version(store: EventStore, record: RunRecord) -> int | None:
    """The stored blueprint version a run's ``run.created`` names, if any."""
    if record.blueprint is None:
        return None
    first = await store.event_at(record.id, 0)
    if first is None or first.type != "run.created":
        return None
    value = first.data.get("blueprint_version")
    return value if isinstance(value, int) else None


def _positive(what: str, value: int) -> int:
    if value < 1:
        raise ConfigError(f"invalid {what} {value}: versions count from 1")
    return value


class LocalBlueprints:
    """``LocalApi``'s side of ``BlueprintDoor`` (a mixin over its account store and engine)."""

    if TYPE_CHECKING:
        actor: str
        workspace: str
        visible: frozenset[str] | None
        world_paths: bool
        accounts_source: AccountsSource | None

        @property
        def engine(self) -> Engine: ...

    async def _accounts(self) -> AccountStore:
        source = self.accounts_source
        if source is None:
            raise ConflictError(
                "stored blueprints live in an account store: this door has none"
                " (set HELIX_SERVER, or HELIX_DB)"
            )
        if callable(source):
            source = self.accounts_source = await source()
        return source

    def _where(self, workspace: str | None) -> str:
        where = workspace or self.workspace
        if self.visible is not None and where not in self.visible:
            raise NotFoundError(f"no workspace {where!r}")
        return where

    async def _version(self, where: str, name: str, version: int | None) -> StoredBlueprint:
        from helix.accounts import AccountNotFoundError, check_name

        check_name("blueprint", name)
        if version is not None:
            _positive("blueprint version", version)
        found = await (await self._accounts()).get_blueprint(where, name, version)
        if found is None:
            which = "" if version is None else f" version {version}"
            raise AccountNotFoundError(f"no blueprint {name!r}{which} in workspace {where!r}")
        return found

    async def blueprints(self, *, workspace: str | None = None) -> list[BlueprintInfo]:
        """The workspace's stored blueprints, each at its latest version, by name."""
        where = self._where(workspace)
        latest = await (await self._accounts()).latest_blueprints(where)
        return [BlueprintInfo.of(found) for found in latest]

    async def blueprint(
        self, name: str, *, version: int | None = None, workspace: str | None = None
    ) -> BlueprintVersion:
        """One version with its fields (default: the latest)."""
        return BlueprintVersion.of(await self._version(self._where(workspace), name, version))

    async def save_blueprint(
        self,
        name: str,
        blueprint: Blueprint | dict[str, Any],
        *,
        expected_version: int | None = None,
        note: str | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Check ``blueprint`` and store it as the next version of ``name``."""
        from helix.accounts import AccountExistsError, check_name
        from helix.kernel.events import utc_now_iso
        from helix.runtime import Blueprint

        where = self._where(workspace)
        check_name("blueprint", name)
        note = note or ""
        if "\n" in note or "\r" in note or len(note) > NOTE_LIMIT:
            raise ConfigError(f"a blueprint's note is one line of at most {NOTE_LIMIT} characters")
        if expected_version is not None and expected_version < 0:
            raise ConfigError(f"invalid expected version {expected_version}: 0 or more")
        if isinstance(blueprint, Blueprint):
            checked = blueprint.model_copy(update={"name": name})
        else:
            fields = {**blueprint, "name": name} if isinstance(blueprint, dict) else blueprint
            checked = Blueprint.parse(fields, source="invalid blueprint")
        checked = checked.check(self.engine.tools)
        body = {**checked.model_dump(mode="json", exclude_defaults=True), "name": name}
        store = await self._accounts()
        if self.visible is None and await store.get_workspace(where) is None:
            # embedded, the person here may name a workspace the first time they save in it
            with contextlib.suppress(AccountExistsError):
                await store.add_workspace(where, "team", created_at=utc_now_iso())
        stored = await store.add_blueprint(
            where, name, body, expected=expected_version, by=self.actor, at=utc_now_iso(),
            note=note,
        )  # fmt: skip
        return BlueprintVersion.of(stored)

    async def blueprint_history(
        self, name: str, *, workspace: str | None = None
    ) -> list[BlueprintInfo]:
        """Every version, oldest first."""
        where = self._where(workspace)
        await self._version(where, name, None)  # none so named: NotFoundError
        history = await (await self._accounts()).blueprint_history(where, name)
        return [BlueprintInfo.of(found) for found in history]

    async def blueprint_diff(
        self, name: str, a: int, b: int, *, workspace: str | None = None
    ) -> BlueprintDiff:
        """Version ``a`` to version ``b`` of the stored blueprint ``name``."""
        where = self._where(workspace)
        first = await self._version(where, name, _positive("version a", a))
        second = await self._version(where, name, _positive("version b", b))
        return blueprint_diff(name, first, second)

    async def rollback_blueprint(
        self,
        name: str,
        version: int,
        *,
        expected_version: int | None = None,
        workspace: str | None = None,
    ) -> BlueprintVersion:
        """Save version ``version``'s fields as the next version, noted ``rollback to vN``."""
        old = await self._version(self._where(workspace), name, _positive("version", version))
        return await self.save_blueprint(
            name, old.body, expected_version=expected_version, note=f"rollback to v{version}",
            workspace=workspace,
        )  # fmt: skip

    def names_stored(self, spec: str) -> bool:
        """Whether ``create``'s ``blueprint`` string names a stored blueprint, not a file.

        With an account store, it does; where paths on this machine are taken (embedded),
        a path to a file (an existing file, or one with a folder or a ``.yaml``, ``.yml``,
        ``.toml`` or ``.json`` suffix) is still the file.
        """
        if self.accounts_source is None:
            return False
        return not (self.world_paths and is_blueprint_file(spec))

    async def stored_run_blueprint(self, workspace: str, spec: str) -> tuple[Blueprint, int]:
        """The stored blueprint ``NAME`` or ``NAME@N`` names, to run, and its version."""
        from helix.runtime import Blueprint

        name, version = split_stored(spec)
        found = await self._version(self._where(workspace), name, version)
        return Blueprint.parse(found.body, source="invalid blueprint", name=name), found.version
