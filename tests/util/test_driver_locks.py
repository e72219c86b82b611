"""Driver locks: asking whether a run is driven never gets in a starting driver's way."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helix._util import DriverLocks, LockHeld


@pytest.mark.parametrize("ofd", [True, False], ids=["ofd-look", "shared-flock"])
def test_asking_makes_no_file_and_sees_a_holder(
    tmp_path: Path, ofd: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of asking: looking at the OFD lock (Linux), or a shared flock elsewhere."""
    monkeypatch.setattr("helix._util._driver_locks._OFD", ofd)
    locks = DriverLocks(tmp_path)
    assert locks.held("run_a") is False
    assert not (tmp_path / "locks").exists()  # asking about a run made nothing
    with locks.hold("run_a"):
        assert locks.held("run_a") is True
        assert locks.held("run_b") is False
        with pytest.raises(LockHeld), DriverLocks(tmp_path).hold("run_a"):
            pass
    assert locks.held("run_a") is False


def test_a_driver_starts_while_others_keep_asking(tmp_path: Path) -> None:
    """Askers take the lock shared for an instant; a driver tells them from a driver."""
    locks = DriverLocks(tmp_path)
    with locks.hold("run_a"):
        pass  # the lock file exists from here on
    stop = threading.Event()
    asked = [0]

    def ask() -> None:
        while not stop.is_set():
            locks.held("run_a")
            asked[0] += 1

    askers = [threading.Thread(target=ask) for _ in range(3)]
    for thread in askers:
        thread.start()
    try:
        for _ in range(300):
            with locks.hold("run_a"):  # never LockHeld: only askers were there
                pass
    finally:
        stop.set()
        for thread in askers:
            thread.join()
    assert asked[0] > 0
