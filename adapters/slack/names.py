"""People's names for mentions in incoming text, asked of Slack once and kept for an hour.

The ack path reads only names known already (``known``); the others are asked for where the
job runs, before the agent reads the message (``SlackAdapter.complete_message``), every
lookup of a message sharing one short budget; a name not had in time is shown as ``@U123``,
which is stable, and asked for again next time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from clarigate.gateway.boundary.port import DeliveryFailed

log = logging.getLogger(__name__)

NAME_TTL_SECONDS = 3600.0
MAX_NAMES = 5000
LOOKUP_BUDGET_SECONDS = 0.8


class NameBook:
    """User id -> display name, from ``lookup`` (``users.info``), cached with an expiry."""

    def __init__(self, lookup: Callable[[str], Awaitable[str | None]]) -> None:
        self.lookup = lookup
        self._names: OrderedDict[str, tuple[str | None, float]] = OrderedDict()

    def _cached(self, user_id: str, now: float) -> tuple[bool, str | None]:
        entry = self._names.get(user_id)
        if entry is None or entry[1] <= now:
            return False, None
        return True, entry[0]

    async def _fetch(self, user_id: str) -> None:
        try:
            name = await self.lookup(user_id)
        except DeliveryFailed as error:
            log.debug("slack: no name for %s: %s", user_id, error.code)
            if not error.permanent:
                return
            name = None  # user_not_found, missing_scope: asking again within the hour is no use
        except Exception as error:  # noqa: BLE001 - a name is a nicety: the id stands in for it
            log.debug("slack: no name for %s: %s", user_id, type(error).__name__)
            return
        self._names[user_id] = (name, time.monotonic() + NAME_TTL_SECONDS)
        self._names.move_to_end(user_id)
        while len(self._names) > MAX_NAMES:
            self._names.popitem(last=False)

    def known(self, user_ids: list[str]) -> dict[str, str]:
        """The names of ``user_ids`` known already, without asking Slack (for the ack path)."""
        now = time.monotonic()
        found = {u: self._cached(u, now)[1] for u in user_ids}
        return {u: name for u, name in found.items() if name}

    async def names(self, user_ids: list[str], budget: float = LOOKUP_BUDGET_SECONDS) -> dict[str, str]:
        """The names known for ``user_ids`` after at most ``budget`` seconds of asking."""
        now = time.monotonic()
        missing = [u for u in user_ids if not self._cached(u, now)[0]]
        if missing:
            tasks = [asyncio.ensure_future(self._fetch(u)) for u in missing]
            _, late = await asyncio.wait(tasks, timeout=budget)
            for task in late:
                task.cancel()
        return self.known(user_ids)
