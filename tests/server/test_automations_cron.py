"""Cron automations on real servers: on schedule, missed slots per policy, two servers once."""

from __future__ import annotations

from pathlib import Path

import pytest

from helix.testing import MockModelServer

from ._automation_kit import (
    T0,
    SetClock,
    add,
    answer_always,
    checked,
    fired_runs,
    iso,
    serve,
    store_blueprint,
    user,
)
from .conftest import Admin, make_config


def test_a_cron_automation_fires_on_schedule_and_its_run_says_why(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    answer_always(model_server)
    clock = SetClock()
    admin = Admin(make_config(tmp_path, model_server).db_url)
    server = serve(tmp_path, model_server, clock)
    try:
        token = user(admin, "ann")
        with server.client(token) as client:
            store_blueprint(client, "ann")
            created = add(client, "ann", {"kind": "cron", "cron": "* * * * *"})
            automation = created["automation"]
            assert created["secret"] is None
            assert automation["next_firing"] == iso(T0 + 30)
            checked(server, T0)
            assert fired_runs(client, "ann") == []  # no slot yet

            clock.set(T0 + 31)  # 12:01:01
            checked(server, T0 + 31)
            fired = fired_runs(client, "ann")
            assert len(fired) == 1
            assert fired[0]["automation_id"] == automation["id"]
            assert fired[0]["trigger"] == "cron"
            assert fired[0]["slot"] == f"cron:{iso(T0 + 30)}"
            assert fired[0]["missed"] is False
            assert fired[0]["seq"] == 1  # right after run.created: before anything ran

            listed = client.get("/automations").json()["automations"]
            assert [a["id"] for a in listed] == [automation["id"]]
            assert listed[0]["last_firing"]["run_id"] == fired[0]["run"]
            assert listed[0]["next_firing"] == iso(T0 + 90)

            clock.set(T0 + 32)  # the same minute again: nothing more
            checked(server, T0 + 32)
            assert len(fired_runs(client, "ann")) == 1
    finally:
        server.stop()


@pytest.mark.parametrize(("policy", "expected"), [("skip", 0), ("once", 1), ("all", 5)])
def test_slots_missed_while_down_follow_the_policy_after_a_restart(
    tmp_path: Path, model_server: MockModelServer, policy: str, expected: int
) -> None:
    answer_always(model_server)
    clock = SetClock()
    admin = Admin(make_config(tmp_path, model_server).db_url)
    first = serve(tmp_path, model_server, clock)
    try:
        token = user(admin, "ann")
        with first.client(token) as client:
            store_blueprint(client, "ann")
            add(client, "ann", {"kind": "cron", "cron": "* * * * *"}, missed=policy)
            checked(first, T0)
    finally:
        first.stop()

    clock.set(T0 + 5 * 60)  # down from 12:00:30 to 12:05:30: slots 12:01 … 12:05 missed
    second = serve(tmp_path, model_server, clock)
    try:
        with second.client(token) as client:
            checked(second, T0 + 5 * 60)
            fired = fired_runs(client, "ann")
            assert len(fired) == expected
            assert all(f["missed"] for f in fired)
            if policy == "once":
                assert fired[0]["slot"] == f"cron:{iso(T0 + 4 * 60 + 30)}"  # the latest
            if policy == "all":
                slots = [f"cron:{iso(T0 + 30 + 60 * i)}" for i in range(5)]
                assert [f["slot"] for f in fired] == slots

            clock.set(T0 + 6 * 60)  # the next slot comes while it runs: on time, once
            checked(second, T0 + 6 * 60)
            later = fired_runs(client, "ann")
            assert len(later) == expected + 1
            assert later[-1]["slot"] == f"cron:{iso(T0 + 5 * 60 + 30)}"
            assert later[-1]["missed"] is False
    finally:
        second.stop()


@pytest.mark.postgres
def test_two_servers_on_one_database_fire_each_slot_once(
    tmp_path: Path, model_server: MockModelServer, fresh_postgres_url: str
) -> None:
    answer_always(model_server)
    clock = SetClock()
    admin = Admin(fresh_postgres_url)
    servers = [
        serve(tmp_path / name, model_server, clock, db_url=fresh_postgres_url)
        for name in ("a", "b")
    ]
    try:
        token = user(admin, "ann")
        with servers[0].client(token) as client:
            store_blueprint(client, "ann")
            add(client, "ann", {"kind": "cron", "cron": "* * * * *"}, missed="all")
            for minute in range(1, 4):  # three slots, each seen by both servers
                clock.set(T0 + 60 * minute)
                for server in servers:
                    checked(server, T0 + 60 * minute)
            fired = fired_runs(client, "ann")
            assert [f["slot"] for f in fired] == [f"cron:{iso(T0 + 30 + 60 * i)}" for i in range(3)]
            claimed = [s.app.state.helix.scheduler.fired for s in servers]
            assert sum(claimed) == 3
    finally:
        for server in servers:
            server.stop()
