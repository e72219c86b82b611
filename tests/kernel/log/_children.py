"""Child-process programs for crash and cross-process tests (run with ``python -c``)."""

from __future__ import annotations

APPEND_FOREVER = """
import asyncio, sys
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import open_store

async def main(url, run_id, batch):
    store = await open_store(url)
    seq = (await store.get_run(run_id)).next_seq
    while True:
        events = [NewEvent(SteerReceived(message=f"m{seq + i}")) for i in range(batch)]
        seq = await store.append(run_id, events, expected_seq=seq)
        print(seq - 1, flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""

RACE_WRITER = """
import asyncio, sys
from helix.errors import SeqConflictError
from helix.kernel.events import NewEvent, SteerReceived
from helix.kernel.log import open_store

async def main(url, run_id, name, count):
    store = await open_store(url)
    written = 0
    while written < count:
        seq = (await store.get_run(run_id)).next_seq
        try:
            await store.append(
                run_id, [NewEvent(SteerReceived(message=f"{name}-{written}"))], expected_seq=seq
            )
            written += 1
        except SeqConflictError:
            pass
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
"""
