"""``helix spend --by role``: what each role's calls cost; ``helix logs`` names the role."""

from __future__ import annotations

import json
from pathlib import Path

from .test_cli import helix


def test_spend_by_role_and_the_role_in_the_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert helix(home, "demo").returncode == 0
    by_role = helix(home, "spend", "--by", "role", "--json")
    assert by_role.returncode == 0, by_role.stderr
    *rows, total = (json.loads(line) for line in by_role.stdout.splitlines())
    assert [row["role"] for row in rows] == ["main"]  # the demo's own turns
    assert rows[0]["input_tokens"] == total["input_tokens"] > 0
    table = helix(home, "spend", "--by", "role")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].startswith("main ")

    bad = helix(home, "spend", "--by", "roles")
    assert bad.returncode == 2
    assert "role" in bad.stderr + bad.stdout

    listing = helix(home, "runs", "--json")
    run_id = json.loads(listing.stdout.splitlines()[0])["id"]
    logs = helix(home, "logs", run_id)
    assert logs.returncode == 0, logs.stderr
    requested = [line for line in logs.stdout.splitlines() if "model.requested" in line]
    assert requested
    assert all("main: openai:scripted-demo" in line for line in requested)
