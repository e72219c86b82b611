"""``instructions_per_turn``: a turn's instructions counted under callgrind, with its baseline."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from helix.bench._turncost import instructions_per_turn, total_instructions, valgrind


@pytest.fixture
def with_valgrind() -> None:
    if valgrind() is None:
        message = "valgrind is not installed (the instruction count needs it)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.usefixtures("with_valgrind")
@pytest.mark.timeout(900)  # four processes under callgrind (~50x slower), mostly their start
async def test_a_turn_is_counted_beside_plain_sqlite_committing_its_rows(tmp_path: Path) -> None:
    (figure,) = await instructions_per_turn(tmp_path / "count", (3, 5))
    assert (figure.suite, figure.name, figure.unit) == (
        "engine",
        "instructions_per_turn",
        "instructions",
    )
    assert figure.params["turns"] == [3, 5]
    assert figure.baseline is not None
    # Plain sqlite3 writing the rows is a floor under the harness that writes them.
    assert 10_000 < figure.baseline < figure.value < 50_000_000
    assert await asyncio.to_thread(os.listdir, tmp_path) == []  # the workers' files are gone


def test_a_callgrind_file_without_a_total_is_an_error() -> None:
    assert total_instructions("events: Ir\nsummary: 1234\n") == 1234
    assert total_instructions("events: Ir\ntotals: 99\n") == 99
    with pytest.raises(RuntimeError, match="no instruction total"):
        total_instructions("events: Ir\n")
