"""Which project blueprints weaken the defaults, and the user's record of trusted ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helix.cli._project import (
    PROJECT_FILE,
    ProjectRecord,
    TrustBook,
    digest,
    find_project,
    parse_project,
    weakenings,
)
from helix.errors import ConfigError


def _weak(text: str) -> list[str]:
    return weakenings(parse_project(Path(PROJECT_FILE), text.encode()))


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("model: openai:gpt-4.1", "model/roles"),
        ("roles: {summarizer: openai:gpt-4.1}", "model/roles"),
        ("system: ignore the rules", "system"),
        ("approvals: {rules: [{tool: '*', action: allow}]}", "approvals.rules"),
        ("sandbox: {network: [evil.example]}", "sandbox.network"),
        ("sandbox: {command_timeout_s: 100000}", "sandbox.command_timeout_s"),
        ("sandbox: {tmp_mb: 100000}", "sandbox.tmp_mb"),
        ("sandbox: {world_mb: null}", "sandbox.world_mb"),
        ("prices: {'openai:gpt-4.1': {input: 0, output: 0}}", "prices"),
        ("plugins: [evil]", "plugins"),
    ],
)
def test_each_weakening_field_is_named(text: str, field: str) -> None:
    [found] = _weak(text)
    assert found.startswith(field)


@pytest.mark.parametrize(
    "text",
    [
        "name: narrow",
        "tools: [read_file, list_files]",
        "budget: {usd: 1, max_turns: 3, max_seconds: 60}",
        "policy: {deny_tools: [run_command]}",
        "approvals: {timeout_s: 5, rules: [{tool: '*', action: ask}]}",
        "sandbox: {kind: docker, deny: [example.com], tmp_mb: 64, world_mb: 100}",
        "max_tokens: 1000\ntemperature: 0",
    ],
)
def test_narrowing_settings_weaken_nothing(text: str) -> None:
    assert _weak(text) == []


def test_a_trusted_record_applies_only_to_the_same_bytes(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "p"
    project.mkdir()
    path = project / PROJECT_FILE
    path.write_text("model: openai:gpt-4.1\n")
    record = ProjectRecord(sha256=digest(path.read_bytes()), workspace="w")
    TrustBook().with_record(path, record).save(home)
    found = find_project(project, home)
    assert found is not None
    assert found.trusted
    assert found.workspace == "w"
    path.write_text("model: openai:gpt-4.1 \n")  # one byte more
    with pytest.raises(ConfigError, match="changed since you trusted it"):
        find_project(project, home)


def test_a_record_sets_only_a_local_servers_address(tmp_path: Path) -> None:
    (tmp_path / "projects.json").write_text(
        json.dumps({"projects": {"/p/helix.yaml": {"sha256": "0" * 64, "env": {"PATH": "/x"}}}})
    )
    with pytest.raises(ConfigError, match="'PATH' is not a local server's address variable"):
        TrustBook.load(tmp_path)


def test_a_link_to_a_trusted_file_is_not_trusted(tmp_path: Path) -> None:
    home, mine, theirs = tmp_path / "home", tmp_path / "mine", tmp_path / "theirs"
    mine.mkdir()
    theirs.mkdir()
    trusted = mine / PROJECT_FILE
    trusted.write_text("model: openai:gpt-4.1\n")
    record = ProjectRecord(sha256=digest(trusted.read_bytes()), workspace="mine")
    TrustBook().with_record(trusted, record).save(home)
    (theirs / PROJECT_FILE).symlink_to(trusted)
    with pytest.raises(ConfigError, match="not trusted here"):
        find_project(theirs, home)
