"""``helix memory`` and ``helix artifacts``, run as a real process on the store here:
add, list, search, edit, rm, export, import; artifacts put, get, list, rm; bad input is
a message and an exit code, never a trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli import helix


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_memories_from_the_command_line(home: Path, tmp_path: Path) -> None:
    added = helix(home, "memory", "add", "Deploys go out on Tuesdays", "--scope", "workspace",
                  "--tag", "deploy", "--json")  # fmt: skip
    assert added.returncode == 0, added.stderr
    memory = json.loads(added.stdout)
    assert (memory["scope"], memory["tags"]) == ("workspace", ["deploy"])
    mine = helix(home, "memory", "add", "I like green tea")
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.startswith("remembered mem_")
    assert mine.stdout.strip().endswith("(personal)")

    found = helix(home, "memory", "search", 'tuesdays "deploy OR')
    assert found.returncode == 0, found.stderr
    assert "nothing matches" in found.stdout  # OR is a word, and no memory holds it
    found = helix(home, "memory", "search", 'tuesdays "deploy')
    assert memory["id"] in found.stdout
    assert "tea" not in found.stdout
    listed = helix(home, "memory", "list", "--scope", "personal", "--json")
    assert [json.loads(line)["text"] for line in listed.stdout.splitlines()] == ["I like green tea"]

    edited = helix(home, "memory", "edit", memory["id"], "--text", "Deploys on Wednesdays")
    assert edited.returncode == 0, edited.stderr
    assert "Wednesdays" in helix(home, "memory", "list").stdout

    exported = tmp_path / "export.jsonl"
    assert helix(home, "memory", "export", "-o", str(exported)).returncode == 0
    lines = exported.read_text().splitlines()
    assert len(lines) == 2  # the header and the workspace's memory, no personal one
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + '\n{"kind": "memory", "scope": "workspace", "text": ""}\n')
    refused = helix(home, "memory", "import", str(bad))
    assert refused.returncode == 2
    assert "line 2" in refused.stderr
    assert "Traceback" not in refused.stderr
    imported = helix(home, "memory", "import", str(exported))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == "imported 1 memories, 0 artifact versions"

    removed = helix(home, "memory", "rm", memory["id"])
    assert removed.returncode == 0
    gone = helix(home, "memory", "rm", memory["id"])
    assert gone.returncode == 3
    assert "no memory" in gone.stderr
    assert helix(home, "memory", "add", "x", "--scope", "everyone").returncode == 2
    bad_tag = helix(home, "memory", "add", "x", "--tag", "two words")
    assert bad_tag.returncode == 2
    assert "invalid tag" in bad_tag.stderr
    assert helix(home, "memory", "edit", "mem_0000000000000000").returncode == 2


def test_artifacts_from_the_command_line(home: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    plan.write_text("# v1\n")
    assert helix(home, "artifacts", "put", str(plan), "--scope", "workspace").returncode == 0
    plan.write_text("# v2\n")
    saved = helix(home, "artifacts", "put", str(plan), "--scope", "workspace")
    assert saved.stdout.strip() == "saved plan.md v2 (workspace)"
    listed = helix(home, "artifacts", "list", "--json")
    [artifact] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (artifact["name"], artifact["version"], artifact["media_type"]) == (
        "plan.md", 2, "text/markdown",
    )  # fmt: skip
    first = helix(home, "artifacts", "get", "plan.md", "--version", "1", "-o", "-")
    assert first.stdout == "# v1\n"
    target = tmp_path / "got.md"
    assert helix(home, "artifacts", "get", "plan.md", "-o", str(target)).returncode == 0
    assert target.read_text() == "# v2\n"
    kept = helix(home, "artifacts", "get", "plan.md", "-o", str(target))
    assert kept.returncode == 1
    assert "--force" in kept.stderr
    named = helix(home, "artifacts", "put", str(plan), "--name", "../up")
    assert named.returncode == 2
    assert "invalid artifact name" in named.stderr
    assert helix(home, "artifacts", "get", "nothing.md").returncode == 3
    assert helix(home, "artifacts", "put", str(tmp_path / "missing.md")).returncode == 3
    removed = helix(home, "artifacts", "rm", "plan.md", "--scope", "workspace")
    assert removed.stdout.strip() == "deleted plan.md (2 versions)"


def test_the_terminal_says_what_a_memory_event_did() -> None:
    from helix.cli._render import summarize
    from helix.kernel.events import MemoryRecalled, MemoryRemembered, NewEvent

    class Shown:
        def __init__(self, new: NewEvent) -> None:
            self.type = new.payload.TYPE
            self.data = new.payload.model_dump(mode="json")

    recalled = MemoryRecalled(call_id="c", query="tea", scopes=["personal"], ids=["mem_1"])
    remembered = MemoryRemembered(call_id="c", id="mem_1", scope="workspace", owner="team", chars=3)
    assert summarize(Shown(NewEvent(recalled))) == "'tea' in personal: 1 found"  # type: ignore[arg-type]
    assert summarize(Shown(NewEvent(remembered))) == "mem_1 (workspace of team)"  # type: ignore[arg-type]


def test_an_embedded_run_remembers_for_its_person(home: Path, tmp_path: Path) -> None:
    """``helix run`` here offers the memory tools: what the run remembers, ``helix memory``
    lists as the person's own (the tables opened only once the tool was called)."""
    scenario = tmp_path / "remember.yaml"
    scenario.write_text(
        "steps:\n"
        "  - text: Noting it.\n"
        "    tool_calls:\n"
        "      - name: remember\n"
        "        args: {text: The staging host is blue-7}\n"
        "  - text: Noted.\n"
    )
    world = tmp_path / "world"
    world.mkdir()
    env = {"HELIX_USER": "ann"}
    ran = helix(home, "run", "note the host", "--model", f"scripted:{scenario}", "--dir",
                str(world), "--auto-approve", "--json", env=env)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    types = [json.loads(line)["type"] for line in ran.stdout.splitlines()]
    assert "memory.remembered" in types
    listed = helix(home, "memory", "list", "--scope", "personal", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    [memory] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (memory["text"], memory["owner"]) == ("The staging host is blue-7", "ann")
    assert helix(home, "memory", "list", "--json", env={"HELIX_USER": "bob"}).stdout == ""
