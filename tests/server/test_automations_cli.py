"""``helix automations`` against a server and embedded on its database; bad input exits 2/3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helix.testing import MockModelServer

from ._automation_kit import (
    T0,
    SetClock,
    answer_always,
    checked,
    fired_runs,
    serve,
    store_blueprint,
    user,
)
from .conftest import WAIT_S, Admin, LiveServer, make_config


def _helix(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "helix", *args], env={**os.environ, **env}, capture_output=True,
        text=True, timeout=WAIT_S, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def _remote(live: LiveServer, token: str) -> dict[str, str]:
    home = str(live.config.home.parent / "client-home")  # nothing local is used
    return {"HELIX_SERVER": live.url, "HELIX_TOKEN": token, "HELIX_HOME": home}


def test_automations_through_a_server(tmp_path: Path, model_server: MockModelServer) -> None:
    answer_always(model_server)
    clock = SetClock()
    live = serve(tmp_path, model_server, clock)
    try:
        token = user(Admin(live.config.db_url), "ann")
        with live.client(token) as client:
            store_blueprint(client, "ann")
        env = _remote(live, token)
        code, out, err = _helix(
            env, "automations", "add", "nightly", "--cron", "* * * * *", "-b", "nightly",
            "-o", "tidy up", "--missed", "all", "--json",
        )  # fmt: skip
        assert code == 0, err
        created = json.loads(out)["automation"]
        assert created["trigger"] == {"kind": "cron", "cron": "* * * * *", "timezone": "UTC"}

        code, out, err = _helix(
            env, "automations", "add", "deploy", "--webhook", "-b", "nightly", "-o", "ship"
        )
        assert code == 0, err
        assert "secret (shown once, keep it safe): whsec_" in out

        clock.set(T0 + 30)
        checked(live, T0 + 30)
        code, out, err = _helix(env, "automations", "list")
        assert code == 0, err
        [cron_line] = [line for line in out.splitlines() if "ann/nightly" in line]
        with live.client(token) as client:
            [fired] = fired_runs(client, "ann")
        assert fired["run"] in cron_line
        assert "whsec_" not in out

        code, out, err = _helix(env, "automations", "pause", created["id"], "--json")
        assert (code, json.loads(out)["paused"]) == (0, True), err
        code, out, err = _helix(env, "automations", "resume", created["id"])
        assert code == 0, err
        assert "next " in out
        code, out, err = _helix(env, "automations", "remove", created["id"])
        assert (code, out.strip()) == (0, f"removed {created['id']}"), err

        for args, exit_code, message in [
            (("--cron", "61 * * * *"), 2, "cron minute: 61 is outside 0-59"),
            (("--cron", "* * *"), 2, "needs 5 fields"),
            (("--cron", "* * * * *", "--missed", "twice"), 2, "missed"),
            (("--cron", "* * * * *", "--webhook"), 2, "exactly one trigger"),
            (("--on", "run.exploded"), 2, "trigger"),
        ]:
            code, _, err = _helix(
                env, "automations", "add", "bad", *args, "-b", "nightly", "-o", "x"
            )
            assert code == exit_code, (args, err)
            assert message in err, (args, err)
            assert "Traceback" not in err
        code, _, err = _helix(
            env, "automations", "add", "bad", "--cron", "0 3 * * *", "-b", "missing", "-o", "x"
        )
        assert code == 3, err
        assert "no blueprint 'missing'" in err
        code, _, err = _helix(env, "automations", "remove", "aut_nope")
        assert code == 3, err
    finally:
        live.stop()


def test_automations_embedded_on_the_servers_database(
    tmp_path: Path, model_server: MockModelServer
) -> None:
    answer_always(model_server)
    config = make_config(tmp_path, model_server)
    admin = Admin(config.db_url)
    token = user(admin, "ann")
    env = {"HELIX_DB": config.db_url, "HELIX_HOME": str(config.home), "HELIX_USER": "ann"}
    code, _, err = _helix(
        env,
        "automations",
        "add",
        "x",
        "--cron",
        "0 3 * * *",
        "-b",
        "nightly",
        "-o",
        "x",
        "-w",
        "ann",
    )
    assert code == 3, err  # nothing stored yet
    clock = SetClock()
    live = serve(tmp_path, model_server, clock)
    try:
        with live.client(token) as client:
            store_blueprint(client, "ann")
        code, _out, err = _helix(
            env,
            "automations",
            "add",
            "x",
            "--cron",
            "* * * * *",
            "-b",
            "nightly",
            "-o",
            "x",
            "-w",
            "ann",
            "--missed",
            "skip",  # made at this machine's time, years before the server's clock
        )
        assert code == 0, err
        clock.set(T0 + 30)
        checked(live, T0 + 30)
        with live.client(token) as client:
            listed = client.get("/automations").json()["automations"]
            assert [(a["name"], a["owner"]) for a in listed] == [("x", "user:ann")]
            assert len(fired_runs(client, "ann")) == 1
    finally:
        live.stop()
