"""A project's blueprint (``helix.yaml``), and which ones this user trusts.

``helix init`` writes ``helix.yaml`` in the project folder and records its SHA-256, the
workspace and any local server address in ``HELIX_HOME/projects.json`` (the user's own
file, mode 0600). ``helix run`` in that folder, without ``--blueprint``, then uses the
file whole while its bytes match the record.

A ``helix.yaml`` the user never trusted (a cloned repository's) is hostile input: it is
used only if it narrows the defaults and nothing else; if it would weaken any of them
(a model of its choosing, approval rules that allow, egress, wider limits, prices,
plugins, another system prompt) the run is refused and the fields are named. One that
changed since the user trusted it is refused whatever it says: what it replaced were
the user's own choices (a ceiling, a minimum tier), which no other file may drop.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from helix._util import first_problem
from helix.errors import ConfigError

if TYPE_CHECKING:
    from helix.runtime import Blueprint

PROJECT_FILE = "helix.yaml"
"""The project blueprint's name, in the project folder."""
MAX_BYTES = 256 * 1024
"""The largest project blueprint read."""
TRUST_FILE = "projects.json"
"""Under ``HELIX_HOME``: the project blueprints this user trusts."""


class ProjectRecord(BaseModel):
    """What ``helix init`` recorded for one project blueprint."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The file's bytes as trusted; any change makes it untrusted again."""
    workspace: str = "default"
    """Where runs from this project are filed."""
    env: dict[str, str] = Field(default_factory=dict[str, str])
    """Provider variables (a local server's address), set for runs unless already set."""

    @field_validator("env")
    @classmethod
    def _addresses_only(cls, env: dict[str, str]) -> dict[str, str]:
        from helix.providers import PROVIDERS

        allowed = {s.base_url_env for s in PROVIDERS.values() if s.local}
        for variable in env:
            if variable not in allowed:
                raise ValueError(f"{variable!r} is not a local server's address variable")
        return env


class TrustBook(BaseModel):
    """Every trusted project blueprint, by its absolute path."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    projects: dict[str, ProjectRecord] = Field(default_factory=dict[str, ProjectRecord])

    @classmethod
    def load(cls, home: Path) -> TrustBook:
        """The book under ``home`` (empty if none); ``ConfigError`` names file and field."""
        path = home / TRUST_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls()
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"{path}: cannot read it: {error}") from None
        try:
            return cls.model_validate(json.loads(text))
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}: does not parse: {error}") from None
        except ValidationError as error:
            raise ConfigError(f"{path}: {first_problem(error)}") from None

    def save(self, home: Path) -> Path:
        """Write the book under ``home`` atomically, readable by this user only."""
        home.mkdir(parents=True, exist_ok=True)
        path = home / TRUST_FILE
        fd, temp = tempfile.mkstemp(dir=home, prefix=".projects-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(self.model_dump_json(indent=2) + "\n")
            os.chmod(temp, 0o600)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return path

    def with_record(self, blueprint_file: Path, record: ProjectRecord) -> TrustBook:
        """This book with ``record`` for ``blueprint_file`` (replacing any)."""
        return TrustBook(projects={**self.projects, key_of(blueprint_file): record})


@dataclass(frozen=True, slots=True)
class Project:
    """The project blueprint a run here uses, and how far it is trusted."""

    path: Path
    blueprint: Blueprint
    trusted: bool
    workspace: str = "default"
    env: tuple[tuple[str, str], ...] = ()


def key_of(blueprint_file: Path) -> str:
    """The book's key for a file: its folder's resolved path and its name.

    The name itself is not resolved: a ``helix.yaml`` that links to a trusted file
    elsewhere is not that file's record.
    """
    return str(blueprint_file.parent.resolve() / blueprint_file.name)


def digest(content: bytes) -> str:
    """The SHA-256 a record holds, of a file's bytes."""
    return hashlib.sha256(content).hexdigest()


def read_project_file(path: Path) -> bytes | None:
    """The file's bytes (``None`` if there is none), read once: hashed and parsed alike.

    ``ConfigError`` unless it is a regular file of at most ``MAX_BYTES`` (a link to
    ``/dev/zero`` or a named pipe in a cloned repository must not hang a run).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror}") from None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path}: not a regular file")
        content = file.read(MAX_BYTES + 1)
    if len(content) > MAX_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_BYTES // 1024} KiB, too large for a blueprint")
    return content


def parse_project(path: Path, content: bytes) -> Blueprint:
    """The blueprint in ``content`` (read from ``path``); ``BlueprintError`` names the field."""
    from helix._util import FileProblem, parse_structured
    from helix.errors import BlueprintError
    from helix.runtime import Blueprint

    try:
        data = parse_structured(content.decode("utf-8"), path.suffix, "blueprint")
    except UnicodeDecodeError as error:
        raise BlueprintError(f"{path}: cannot read the blueprint: {error}") from None
    except FileProblem as problem:
        raise BlueprintError(f"{path}: does not parse: {problem}") from None
    return Blueprint.parse(data, source=str(path), name=path.parent.name or "default")


def find_project(directory: Path, home: Path) -> Project | None:
    """The project blueprint in ``directory``, if there is one, checked as above.

    ``ConfigError`` if it is untrusted and weakens a default; ``BlueprintError`` if it
    is not a valid blueprint.
    """
    path = directory / PROJECT_FILE
    content = read_project_file(path)
    if content is None:
        return None
    record = TrustBook.load(home).projects.get(key_of(path))
    blueprint = parse_project(path, content)
    if record is not None and record.sha256 == digest(content):
        env = tuple(sorted(record.env.items()))
        return Project(path, blueprint, True, record.workspace, env)
    weak = weakenings(blueprint)
    advice = (
        "Review it, then `helix init --trust` to use it as it is, or pass --blueprint FILE"
        " to choose one yourself"
    )
    if record is not None:  # what it replaced were your choices: none may go silently
        what = f": it would weaken the defaults: {'; '.join(weak)}" if weak else ""
        raise ConfigError(f"{path} is changed since you trusted it{what}. {advice}")
    if weak:
        raise ConfigError(
            f"{path} is not trusted here, and it would weaken the defaults:"
            f" {'; '.join(weak)}. {advice}"
        )
    return Project(path, blueprint, False)


def weakenings(blueprint: Blueprint) -> list[str]:
    """What in ``blueprint`` is looser than the defaults (empty: it only narrows them)."""
    from helix.runtime import Blueprint
    from helix.runtime import SandboxSettings as Sandbox

    base, box = Blueprint(), Sandbox()
    found: list[str] = []
    if blueprint.model is not None or blueprint.roles:
        found.append("model/roles: it picks the model your key and code are sent to")
    if blueprint.system != base.system:
        found.append("system: it replaces the system prompt")
    if any(rule.action == "allow" for rule in blueprint.approvals.rules):
        found.append("approvals.rules: it allows calls without asking")
    sandbox = blueprint.sandbox
    if sandbox.network:
        found.append(f"sandbox.network: it opens egress to {', '.join(sandbox.network)}")
    for field in ("command_timeout_s", "tmp_mb"):
        if getattr(sandbox, field) > getattr(box, field):
            found.append(f"sandbox.{field}: it raises the limit")
    assert box.world_mb is not None
    if sandbox.world_mb is None or sandbox.world_mb > box.world_mb:
        found.append("sandbox.world_mb: it raises the world's disk cap")
    if blueprint.prices:
        found.append("prices: it sets model prices (a USD cap is counted with them)")
    if blueprint.plugins:
        found.append("plugins: it loads plugins")
    return found
