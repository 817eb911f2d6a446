"""A record in the shared state rewritten by one step at a time: a lease taken as a lock.

``held`` waits for the lease ``name`` in the adapter state (``AdapterState.acquire_lease``), polling
every ``poll_seconds``; a lease a dead process held expires after ``lease_seconds``. When it
cannot be had within ``wait_seconds`` it raises ``TimeoutError``, or, with ``or_unheld``, goes on
without it (for a rewrite that had better happen twice than not at all).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from clarigate.gateway.boundary.port import AdapterState


@asynccontextmanager
async def held(
    state: AdapterState,
    name: str,
    *,
    lease_seconds: int,
    wait_seconds: float,
    poll_seconds: float,
    or_unheld: bool = False,
) -> AsyncIterator[None]:
    """The lease ``name`` held for the body of the ``async with``, given up after it."""
    holder = uuid.uuid4().hex
    deadline = time.monotonic() + wait_seconds
    while not await state.acquire_lease(name, holder, lease_seconds):
        if time.monotonic() > deadline:
            if or_unheld:
                break
            raise TimeoutError(f"lease {name} held too long")
        await asyncio.sleep(poll_seconds)
    try:
        yield
    finally:
        await state.release_lease(name, holder)
