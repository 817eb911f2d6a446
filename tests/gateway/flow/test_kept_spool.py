"""The file of kept jobs (``flow/kept.py``'s ``Spool``): one connection shared by the worker threads
that call it, each call whole; nothing read makes a file; closed, it opens again when called."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clarigate.gateway.flow.kept import Spool


async def test_keeps_from_many_threads_at_once_are_all_there_in_order_of_arrival(tmp_path: Path):
    spool = Spool(tmp_path / "spool.sqlite3")
    try:
        await asyncio.gather(*(asyncio.to_thread(spool.keep, "slack", {"n": n}) for n in range(40)))
        jobs = await asyncio.to_thread(spool.oldest, 100)
        assert sorted(job["n"] for _, _, job in jobs) == list(range(40))
        assert [seq for seq, _, _ in jobs] == sorted(seq for seq, _, _ in jobs)
        await asyncio.gather(*(asyncio.to_thread(spool.remove, seq) for seq, _, _ in jobs[:30]))
        assert [job["n"] for _, _, job in spool.oldest(100)] == [job["n"] for _, _, job in jobs[30:]]
    finally:
        spool.close()


def test_reading_makes_no_file_and_a_closed_spool_opens_again(tmp_path: Path):
    path = tmp_path / "data" / "spool.sqlite3"
    spool = Spool(path)
    assert spool.oldest(10) == [] and not path.exists()
    spool.keep("slack", {"inbound_id": "slack:D1:1"})
    spool.close()
    spool.keep("slack", {"inbound_id": "slack:D1:2"})  # after a stop, a webhook still in flight
    spool.close()
    again = Spool(path)  # a restarted replica finds both
    try:
        assert [job["inbound_id"] for _, _, job in again.oldest(10)] == ["slack:D1:1", "slack:D1:2"]
    finally:
        again.close()
