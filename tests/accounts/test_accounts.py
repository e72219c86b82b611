"""One conformance suite for the account store, run on SQLite and on PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from helix.accounts import (
    AccountExistsError,
    AccountNotFoundError,
    Accounts,
    Hashing,
    StaleBlueprintVersionError,
    open_accounts,
)
from helix.errors import ConfigError
from helix.gates import Policy


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'helix.db'}"
    url = request.getfixturevalue("postgres_url")
    assert isinstance(url, str)
    return url


@pytest.fixture
async def accounts(database: str) -> AsyncIterator[Accounts]:
    url = database
    store = await open_accounts(url)
    try:
        yield Accounts(store, Hashing.cheap())
    finally:
        await store.close()


def _name(prefix: str) -> str:
    """Unique per test: the PostgreSQL database is shared by the session."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_users_get_a_personal_workspace_and_roles(accounts: Accounts) -> None:
    team, alice = _name("team"), _name("alice")
    await accounts.add_workspace(team)
    await accounts.add_user(alice, password="pw", workspace=team, role="viewer")
    assert await accounts.roles(alice) == {alice: "owner", team: "viewer"}
    await accounts.set_role(team, alice, "admin")
    assert (await accounts.roles(alice))[team] == "admin"
    assert await accounts.store.members(team) == {alice: "admin"}
    workspace = await accounts.store.get_workspace(alice)
    assert workspace is not None
    assert workspace.kind == "personal"


async def test_names_are_unique_and_checked(accounts: Accounts) -> None:
    alice = _name("alice")
    await accounts.add_user(alice)
    with pytest.raises(AccountExistsError):
        await accounts.add_user(alice)
    with pytest.raises(AccountExistsError):
        await accounts.add_workspace(alice)  # the personal workspace holds the name
    with pytest.raises(ConfigError):
        await accounts.add_user("no spaces allowed")
    with pytest.raises(ConfigError):
        await accounts.add_user(_name("bob"), role="emperor")
    with pytest.raises(AccountNotFoundError):
        await accounts.add_user(_name("carol"), workspace=_name("missing"))
    with pytest.raises(AccountNotFoundError):
        await accounts.set_role(_name("missing"), alice, "member")


async def test_passwords_are_hashed_and_checked(accounts: Accounts) -> None:
    alice = _name("alice")
    await accounts.add_user(alice, password="correct horse")
    stored = await accounts.store.get_user(alice)
    assert stored is not None
    assert stored.password_hash is not None
    assert stored.password_hash.startswith("$argon2id$")
    assert "correct horse" not in stored.password_hash
    assert await accounts.authenticate(alice, "correct horse") is not None
    assert await accounts.authenticate(alice, "wrong") is None
    assert await accounts.authenticate(_name("nobody"), "correct horse") is None
    tokens_only = _name("bot")
    await accounts.add_user(tokens_only)
    assert await accounts.authenticate(tokens_only, "") is None


async def test_api_tokens_are_stored_hashed(accounts: Accounts) -> None:
    alice = _name("alice")
    await accounts.add_user(alice)
    token = await accounts.create_api_token(alice)
    assert token.startswith("hx_")
    found = await accounts.user_for_api_token(token)
    assert found is not None
    assert found.name == alice
    assert await accounts.user_for_api_token(token + "x") is None
    assert await accounts.store.find_token(token, "api", now=time.time()) is None  # not in clear
    with pytest.raises(AccountNotFoundError):
        await accounts.create_api_token(_name("nobody"))


async def test_api_tokens_can_be_revoked_one_or_all(accounts: Accounts) -> None:
    alice, bob = _name("alice"), _name("bob")
    await accounts.add_user(alice)
    await accounts.add_user(bob)
    first, second = await accounts.create_api_token(alice), await accounts.create_api_token(alice)
    bobs = await accounts.create_api_token(bob)
    assert await accounts.revoke_api_token(first) == alice
    assert await accounts.user_for_api_token(first) is None  # at once
    assert await accounts.user_for_api_token(second) is not None
    assert await accounts.revoke_api_token(first) is None  # gone already
    login = await accounts.create_login_token(alice)
    assert await accounts.revoke_api_token(login) is None  # only API tokens
    assert await accounts.revoke_api_tokens(alice) == 1
    assert await accounts.user_for_api_token(second) is None
    assert await accounts.user_for_api_token(bobs) is not None  # others' are left alone
    assert await accounts.redeem_login_token(login) is not None
    assert await accounts.revoke_api_tokens(alice) == 0
    with pytest.raises(AccountNotFoundError):
        await accounts.revoke_api_tokens(_name("nobody"))


async def test_a_password_can_be_changed_or_removed(accounts: Accounts) -> None:
    alice = _name("alice")
    await accounts.add_user(alice, password="old secret")
    await accounts.set_password(alice, "new secret")
    assert await accounts.authenticate(alice, "old secret") is None
    assert await accounts.authenticate(alice, "new secret") is not None
    await accounts.set_password(alice, None)
    assert await accounts.authenticate(alice, "new secret") is None
    with pytest.raises(ConfigError):
        await accounts.set_password(alice, "")
    with pytest.raises(AccountNotFoundError):
        await accounts.set_password(_name("nobody"), "x")


async def test_a_removed_user_keeps_nothing_but_their_runs_workspace(accounts: Accounts) -> None:
    alice, team = _name("alice"), _name("team")
    await accounts.add_workspace(team)
    await accounts.add_user(alice, password="pw", workspace=team, role="admin")
    token = await accounts.create_api_token(alice)
    await accounts.store.remove_user(alice)
    assert await accounts.store.get_user(alice) is None
    assert await accounts.user_for_api_token(token) is None
    assert await accounts.authenticate(alice, "pw") is None
    assert await accounts.store.members(team) == {}
    assert await accounts.store.get_workspace(alice) is not None  # where their runs live
    with pytest.raises(AccountNotFoundError):
        await accounts.store.remove_user(alice)
    await accounts.add_user(alice)  # the name is free again, but not the old workspace
    assert await accounts.roles(alice) == {}


async def test_attempts_are_counted_per_key_in_a_sliding_window(accounts: Accounts) -> None:
    store, key, other = accounts.store, _name("10.0.0.1"), _name("10.0.0.2")
    start = time.time()
    for i in range(3):
        assert await store.count_attempt(key, now=start + i, window_s=60, limit=3) is None
    # The fourth is refused (and not counted), with when the window's oldest was made.
    assert await store.count_attempt(key, now=start + 10, window_s=60, limit=3) == start
    assert await store.count_attempt(other, now=start + 10, window_s=60, limit=3) is None
    # A minute after the first, one more fits; the window slides, it does not reset.
    assert await store.count_attempt(key, now=start + 60.5, window_s=60, limit=3) is None
    assert await store.count_attempt(key, now=start + 60.6, window_s=60, limit=3) == start + 1


async def test_a_forgotten_attempt_frees_its_place_and_only_its_own(accounts: Accounts) -> None:
    store, key = accounts.store, _name("user:alice")
    start = time.time()
    for _ in range(2):  # two attempts counted at the very same moment
        assert await store.count_attempt(key, now=start, window_s=60, limit=3) is None
    assert await store.count_attempt(key, now=start + 1, window_s=60, limit=3) is None
    await store.forget_attempt(key, at=start)  # one of the twins turned out fine
    assert await store.count_attempt(key, now=start + 2, window_s=60, limit=3) is None
    assert await store.count_attempt(key, now=start + 3, window_s=60, limit=3) == start
    await store.forget_attempt(_name("user:nobody"), at=start)  # nothing to forget: fine


async def test_login_tokens_work_once_and_expire(accounts: Accounts) -> None:
    alice = _name("alice")
    await accounts.add_user(alice)
    token = await accounts.create_login_token(alice)
    redeemed = await accounts.redeem_login_token(token)
    assert redeemed is not None
    assert redeemed.name == alice
    assert await accounts.redeem_login_token(token) is None
    stale = await accounts.create_login_token(alice, ttl_s=-1)
    assert await accounts.redeem_login_token(stale) is None


async def test_policies_round_trip(accounts: Accounts) -> None:
    team = _name("team")
    await accounts.add_workspace(team)
    assert await accounts.policy(team) == Policy()
    ceiling = Policy(tools=frozenset({"read_file"}), deny_tools=frozenset({"run_command"}))
    await accounts.set_policy(team, ceiling)
    assert await accounts.policy(team) == ceiling
    with pytest.raises(AccountNotFoundError):
        await accounts.set_policy(_name("missing"), ceiling)


async def test_blueprints_are_stored_by_name_per_workspace(accounts: Accounts) -> None:
    team, other = _name("team"), _name("other")
    await accounts.add_workspace(team)
    await accounts.add_workspace(other)
    assert await accounts.blueprint_names(team) == []
    await accounts.save_blueprint(team, "reviewer", {"model": "openai:gpt-4.1", "tools": ["a"]})
    await accounts.save_blueprint(team, "fixer", {"model": "x:y"})
    second = await accounts.save_blueprint(
        team, "reviewer", {"model": "openai:gpt-4.1-mini"}, by="user:ann", note="cheaper"
    )
    assert (second.version, second.by, second.note) == (2, "user:ann", "cheaper")
    assert await accounts.blueprint_names(team) == ["fixer", "reviewer"]
    assert (await accounts.blueprint(team, "reviewer")).body == {"model": "openai:gpt-4.1-mini"}
    first = await accounts.blueprint(team, "reviewer", 1)  # the old version is kept
    assert first.body == {"model": "openai:gpt-4.1", "tools": ["a"]}
    with pytest.raises(AccountNotFoundError):
        await accounts.blueprint(team, "reviewer", 3)
    with pytest.raises(AccountNotFoundError):
        await accounts.blueprint(other, "reviewer")  # another workspace's name is not ours
    with pytest.raises(AccountNotFoundError):
        await accounts.save_blueprint(_name("missing"), "x", {})


async def test_blueprint_versions_are_numbered_and_a_stale_save_is_refused(
    accounts: Accounts,
) -> None:
    team = _name("team")
    await accounts.add_workspace(team)
    with pytest.raises(StaleBlueprintVersionError):
        await accounts.save_blueprint(team, "b", {"system": "x"}, expected_version=1)
    await accounts.save_blueprint(team, "b", {"system": "one"}, expected_version=0)
    await accounts.save_blueprint(team, "b", {"system": "two"}, expected_version=1)
    with pytest.raises(StaleBlueprintVersionError) as refused:
        await accounts.save_blueprint(team, "b", {"system": "late"}, expected_version=1)
    assert refused.value.code == "stale_blueprint_version"
    with pytest.raises(StaleBlueprintVersionError):
        await accounts.save_blueprint(team, "b", {"system": "new?"}, expected_version=0)
    history = await accounts.store.blueprint_history(team, "b")
    assert [(v.version, v.body["system"]) for v in history] == [(1, "one"), (2, "two")]
    latest = await accounts.store.latest_blueprints(team)
    assert [(v.name, v.version) for v in latest] == [("b", 2)]


async def test_blueprints_stored_before_versions_become_version_1(database: str) -> None:
    """An old store's table (one row per name) is moved into versions when opened."""
    workspace = _name("old")
    old_table = (
        "CREATE TABLE accounts_blueprints (workspace TEXT NOT NULL"
        " REFERENCES accounts_workspaces(name), name TEXT NOT NULL, body TEXT NOT NULL,"
        " updated_at TEXT NOT NULL, PRIMARY KEY (workspace, name))"
    )
    store = await open_accounts(database)
    await store.add_workspace(workspace, "team", created_at="2026-01-01T00:00:00Z")
    row = (workspace, "legacy", '{"system": "old"}', "2026-01-02T00:00:00Z")
    if database.startswith("sqlite"):
        db = store._db  # type: ignore[attr-defined]
        db.execute(old_table)
        db.execute("INSERT INTO accounts_blueprints VALUES (?, ?, ?, ?)", row)
    else:
        pool = store._pool  # type: ignore[attr-defined]
        await pool.execute(old_table)
        await pool.execute("INSERT INTO accounts_blueprints VALUES ($1, $2, $3, $4)", *row)
    await store.close()
    store = await open_accounts(database)
    try:
        found = await store.get_blueprint(workspace, "legacy")
        assert found is not None
        assert (found.version, found.body, found.by) == (1, {"system": "old"}, "unknown")
        assert found.at == "2026-01-02T00:00:00Z"
        again = await store.add_blueprint(
            workspace, "legacy", {"system": "new"}, expected=1, by="user:a", at="t", note=""
        )
        assert again.version == 2
    finally:
        await store.close()


async def test_secrets_are_created_once(accounts: Accounts) -> None:
    name = _name("secret")
    first = await accounts.store.secret(name, b"one")
    assert first == b"one"
    assert await accounts.store.secret(name, b"two") == b"one"


async def test_bootstrap_only_on_an_empty_store(tmp_path: Path) -> None:
    store = await open_accounts(f"sqlite:///{tmp_path / 'fresh.db'}")
    accounts = Accounts(store, Hashing.cheap())
    try:
        token = await accounts.bootstrap()
        assert token is not None
        assert await accounts.roles("admin") == {"default": "owner"}
        assert await accounts.bootstrap() is None
        user = await accounts.redeem_login_token(token)
        assert user is not None
        assert user.password_hash is None  # no default password
    finally:
        await store.close()


async def test_memory_urls_are_refused() -> None:
    with pytest.raises(ConfigError):
        await open_accounts("memory://")


async def test_saves_at_once_get_one_version_each(database: str) -> None:
    """Two stores on one database (two servers) saving the same name at once."""
    import asyncio

    team = _name("team")
    first, second = await open_accounts(database), await open_accounts(database)
    try:
        await first.add_workspace(team, "team", created_at="t")

        async def save(store: Any, n: int) -> int:
            saved = await store.add_blueprint(
                team, "b", {"system": str(n)}, expected=None, by="user:a", at="t", note=""
            )
            return int(saved.version)

        versions = await asyncio.gather(*(save((first, second)[n % 2], n) for n in range(8)))
        assert sorted(versions) == list(range(1, 9))
        history = await first.blueprint_history(team, "b")
        assert [v.version for v in history] == list(range(1, 9))
    finally:
        await first.close()
        await second.close()
