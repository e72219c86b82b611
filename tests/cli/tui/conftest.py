"""``helix tui`` as ``helix tui`` opens it: through ``with_door``, embedded or a server's client.

Embedded: a fresh ``HELIX_HOME`` with a SQLite store. Client: a real server (uvicorn on a
free port, tests/api's door) named by ``HELIX_SERVER`` + ``HELIX_TOKEN``. Both reach the
mock model server through ``OPENAI_BASE_URL``. Waits are on the app's state, with a
generous cap for a busy machine, never on the clock.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console, RenderableType
from textual.pilot import Pilot

from helix.cli._door import Door as CliDoor
from helix.cli._door import with_door
from helix.cli._tui import cockpit
from helix.cli.tui import HelixTui
from helix.testing import MockModelServer
from tests.api.conftest import Door, open_door

WAIT_S = 60.0
"""A safety net for a busy machine, never a performance limit."""
SIZE = (100, 36)
SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
def model_server() -> Iterator[MockModelServer]:
    with MockModelServer() as server:
        yield server


def _enter(opened: Door, monkeypatch: pytest.MonkeyPatch) -> None:
    """Name the door in the environment, as a person would for ``helix tui``."""
    for name, value in opened.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HELIX_USER", "tester")
    monkeypatch.delenv("HELIX_SERVER", raising=False)
    monkeypatch.delenv("HELIX_TOKEN", raising=False)
    if opened.url is not None:
        assert opened.token is not None
        monkeypatch.setenv("HELIX_SERVER", opened.url)
        monkeypatch.setenv("HELIX_TOKEN", opened.token)


@pytest.fixture(params=["local", "http"])
def door(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    model_server: MockModelServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Door]:
    with open_door(request.param, tmp_path, model_server) as opened:
        _enter(opened, monkeypatch)
        yield opened


@pytest.fixture
def local_door(
    tmp_path: Path, model_server: MockModelServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Door]:
    with open_door("local", tmp_path, model_server) as opened:
        _enter(opened, monkeypatch)
        yield opened


Scene = Callable[[HelixTui, Pilot[None]], Awaitable[None]]


async def in_tui(scene: Scene, size: tuple[int, int] = SIZE) -> None:
    """Play ``scene`` in the cockpit ``helix tui`` opens here (its door), under the pilot."""

    async def use(door: CliDoor) -> None:
        app = cockpit(door, poll_s=0.2)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: app.screen.is_current and app.screen.id != "_default",
                        "the first screen")  # fmt: skip
            await scene(app, pilot)
            # leave as a person does (q): runs driven here pause and their drives end,
            # closing their model clients, before the app and its door go
            await app.action_quit()
            await pilot.pause()

    await with_door(use)


async def until(
    pilot: Pilot[None], check: Callable[[], object], what: str, cap: float = WAIT_S
) -> None:
    """Let the app run until ``check()`` holds (a safety cap, not a timing)."""
    deadline = time.monotonic() + cap
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.02)


def screen_text(app: HelixTui) -> str:
    """What the terminal shows, as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, record=True, file=io.StringIO(),
                      color_system=None, legacy_windows=False)  # fmt: skip
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def plain(renderable: RenderableType, width: int = 100) -> str:
    """A renderable as plain text."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


MASKS = [
    (re.compile(r"\d{4}-\d{2}-\d{2}T[\d:.]+Z?"), "<time>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}\b"), "hh:mm:ss"),
]


def _same_width(stand_in: str) -> Callable[[re.Match[str]], str]:
    return lambda found: stand_in.ljust(len(found.group()), "~")


def masked(text: str, ids: dict[str, str]) -> str:
    """Ids and times replaced by stable stand-ins (of the same width, so layout holds)."""
    for real, name in ids.items():
        text = text.replace(real, name.ljust(len(real), "_")[: len(real)])
    for pattern, stand_in in MASKS:
        text = pattern.sub(_same_width(stand_in), text)
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def check_snapshot(name: str, text: str) -> None:
    """Compare with tests/tui/snapshots/NAME.txt (HELIX_UPDATE_SNAPSHOTS=1 rewrites it)."""
    import os

    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("HELIX_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text)
        if os.environ.get("HELIX_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"wrote a new snapshot {path.name}: check it and run again")
    assert text == path.read_text(), f"the screen differs from snapshots/{path.name}"
