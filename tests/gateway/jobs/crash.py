"""A replica's worker killed as ``kill -9`` kills it: its loops and jobs stop where they are,
nothing is handed back, its claims in Redis are left to go stale (what the other replica sees)."""

from __future__ import annotations

import asyncio
from typing import Any


async def abandon(gateway: Any) -> None:
    """Stop ``gateway``'s worker pool and upkeep at once, releasing nothing (a dead consumer)."""
    pool = gateway.pool
    pool._stopping = True
    tasks = [*pool._loops, *([pool._keeper] if pool._keeper is not None else [])]
    tasks += [held.task for held in pool._held.values() if held.task is not None]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    pool._loops, pool._keeper = [], None
    await gateway.upkeep.stop()


async def eventually(check: Any, within: float = 30.0) -> Any:
    """Poll ``check()`` (sync or async) until it is truthy; fail after ``within`` seconds."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.02)
