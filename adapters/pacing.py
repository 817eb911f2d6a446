"""Live-update budgets shared by every replica and worker process of a bot, through the store.

A platform limits live updates per scope: Telegram 20 messages a minute per group, Slack
``chat.update`` 50 and ``chat.appendStream`` 100 a minute per workspace, Feishu 1000 calls a
minute per app and API. Counted in one process, that budget is multiplied by the number of
worker processes and replicas; so a ``Budget`` is cut into windows of ``period / calls`` seconds,
the same on every process (wall-clock time), and each window holds one update of its scope,
taken as a lease in the shared state (``AdapterState.acquire_lease``). The first to ask in a
window has it; the others wait for the next window, once, and if that one is taken too the
update is skipped (``take`` raises ``LiveSkipped`` with the seconds to the window after): a run's
first words are tried again then, at each window until one has room; a later update's text
waits for the run's next update (the reply shows the whole of it).

A process asks the store for a window once, whatever the number of its updates waiting for it:
the first of them to ask has it if the store gives it, and the others of the process have lost
it either way. So many runs skipped together cost a lease attempt a window per process while
they drain, one run a window, not one per run still waiting (quadratic in the runs).

When the store does not answer, the windows are counted in this process alone, as before budgets
were shared: updates go on, paced per process.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from clarigate.gateway.boundary.port import AdapterState, LiveSkipped

log = logging.getLogger(__name__)

#: Scopes whose last window this process remembers at most (for when the store is down).
MAX_LOCAL = 10_000


@dataclass(frozen=True)
class Budget:
    """``calls`` live updates per ``period`` seconds in one scope (a group, a workspace's method)."""

    calls: float
    period: float

    @property
    def window(self) -> float:
        """Seconds of one window: one update in it."""
        return self.period / self.calls


def until_next(budget: Budget) -> float:
    """Seconds until the next window of ``budget`` begins (the same instant on every replica)."""
    interval = budget.window
    return interval - time.time() % interval


class SharedPace:
    """Slots for live updates, one per budget window and scope, shared through the state that
    ``state`` gives (read at each update: an adapter may be built before its gateway is)."""

    def __init__(self, state: Callable[[], AdapterState], platform: str) -> None:
        self.state = state
        self.platform = platform
        self._asked: dict[str, int] = {}  # scope -> the last window this process asked for

    async def slot(self, scope: str, budget: Budget) -> bool:
        """True when this update of ``scope`` may go out now (it may have waited one window for
        it); False when it is to be skipped."""
        interval = budget.window
        for attempt in range(2):
            now = time.time()  # the windows are the same on every replica
            window = int(now // interval)
            if await self._take(scope, window, interval):
                return True
            if attempt == 0:
                await asyncio.sleep((window + 1) * interval - now)
        return False

    async def take(self, scope: str, budget: Budget) -> None:
        """``slot``, for an update: ``LiveSkipped`` when it is to be skipped, with the seconds until
        the next window begins (when a slot may be had again)."""
        if not await self.slot(scope, budget):
            raise LiveSkipped(until_next(budget))

    async def _take(self, scope: str, window: int, interval: float) -> bool:
        """True for the one update of this process that has ``window`` of ``scope``: the first here
        to ask for it, if the store gives it (or does not answer: this process paces itself)."""
        if self._asked.get(scope, -1) >= window:
            return False  # asked for here already: that update's, or another process's
        if len(self._asked) > MAX_LOCAL:
            self._asked.clear()
        self._asked[scope] = window
        name = f"live-pace:{scope}:{window}"
        try:
            return await self.state().acquire_lease(name, uuid.uuid4().hex, math.ceil(interval) + 1)
        except Exception as exc:  # noqa: BLE001 (the store down: this process's windows alone)
            log.debug("%s live pace not shared for %s: %s", self.platform, scope, exc)
        return True
