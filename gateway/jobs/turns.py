"""A job's turn: it runs once every earlier job of its order key is complete, here or elsewhere.

Each job of an order key (a chat thread, or that thread's control lane for out-of-turn commands)
carries the ``seq`` it was accepted with; Redis keeps the last one completed (``next_seq``). A job
waiting for an earlier one held by the same replica is woken when that one ends; only when the
earlier job is held elsewhere does the waiter ask Redis, with backoff.

Out-of-turn commands (``kind`` "command": ``/status``, ``/cancel``, ``/help``, ``/start``) take
milliseconds, so one waits for the command before it at most ``COMMAND_TURN_WAIT``: a command held
by a worker that died, claimed only once stale (``stale_claim_seconds``), holds up no later one.
That command itself runs late: ``/cancel`` then closes only a question asked before it was sent
(``Control``); ``/status`` and ``/help`` answer as things stand when they run.
Messages, answers and ``/new`` always wait for their turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from clarigate.gateway.store.base import Store
from clarigate.gateway.store.connection import unreachable
from clarigate.gateway.store.records import Job

log = logging.getLogger(__name__)

#: Waiting for a turn another replica holds: polls back off to this ceiling (seconds).
MAX_TURN_POLL = 0.25
#: How long a command waits for the command before it in its chat thread (seconds): far longer
#: than a command takes, far shorter than the stale-claim time that frees one whose worker died.
COMMAND_TURN_WAIT = 1.0


class Turns:
    """The order keys of the jobs one replica holds, and each job's wait for its turn."""

    def __init__(self, store: Store, on_unreachable: Callable[[], None]) -> None:
        self.store = store
        self._on_unreachable = on_unreachable  # told when Redis could not be asked (the claim fence)
        self._here: dict[str, set[int]] = {}  # order key -> seqs of the jobs held here
        self._changed: dict[str, asyncio.Event] = {}

    def arrived(self, job: Job) -> None:
        """``job`` is held here now: later jobs of its order key held here wait for it to end."""
        self._here.setdefault(job.order_key, set()).add(job.seq)

    def ended(self, job: Job) -> None:
        """``job`` is no longer held here: the next job of its order key here is woken."""
        seqs = self._here.get(job.order_key)
        if seqs is not None:
            seqs.discard(job.seq)
            if not seqs:
                del self._here[job.order_key]
        changed = self._changed.pop(job.order_key, None)
        if changed is not None:
            changed.set()

    async def wait(self, job: Job, park: Callable[[], None]) -> None:
        """Return once it is ``job``'s turn (a command: at most ``COMMAND_TURN_WAIT`` later);
        ``park`` is called when it has to wait."""
        if job.seq == 1:
            return  # seq 1 is handed out only when nothing of this order key is outstanding
        if job.kind != "command":
            await self._wait(job, park)
            return
        try:
            async with asyncio.timeout(COMMAND_TURN_WAIT):
                await self._wait(job, park)
        except TimeoutError:
            log.info(
                "command %s runs without the command before it, still held (maybe by a dead worker)",
                job.inbound_id,
            )

    async def _wait(self, job: Job, park: Callable[[], None]) -> None:
        """Wait until every earlier job of ``job``'s order key is complete (here or elsewhere)."""
        delay = 0.002
        task = asyncio.current_task()
        while True:
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # a cancellation something below swallowed: honour it
            changed = self._changed.setdefault(job.order_key, asyncio.Event())
            if any(seq < job.seq for seq in self._here.get(job.order_key, ())):
                park()
                await changed.wait()
                continue
            if await self._turn_came(job):
                return
            park()
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
            # that lands as the event is set (the job ahead finishing as the pool stops), and
            # this loop would then poll forever and hang the shutdown.
            try:
                async with asyncio.timeout(delay):
                    await changed.wait()
            except TimeoutError:
                delay = min(delay * 2, MAX_TURN_POLL)

    async def _turn_came(self, job: Job) -> bool:
        """True when Redis says every earlier job of the order key is complete; False while Redis
        cannot be reached (the job keeps waiting, held, rather than being dropped here)."""
        try:
            return await self.store.next_seq(job.order_key) >= job.seq
        except Exception as exc:
            if not unreachable(exc):
                raise
            self._on_unreachable()
            return False
