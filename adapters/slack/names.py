"""People's names, asked of Slack once and kept for an hour: the sender of a message and the
people it mentions.

The ack path reads only names known already (``known``); the others are asked for where the
job runs, before the agent reads the message (``SlackAdapter.complete_message``, ``named``),
every lookup of a message sharing one short budget. A mention not named in time is shown as
``@U123``, which is stable, and a sender keeps ``display_name`` None; a lookup still under way
when the budget ends goes on (within the client's timeout) for the next message, and a second
message from the same person waits for it instead of asking again. Without the ``users:read``
scope one warning says so and no one is asked for an hour.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from clarigate.gateway.boundary.messages import InboundMessage
from clarigate.gateway.boundary.port import DeliveryFailed

from .decode import name_mentions

log = logging.getLogger(__name__)

NAME_TTL_SECONDS = 3600.0
MAX_NAMES = 5000
LOOKUP_BUDGET_SECONDS = 0.8
SCOPE = "users:read"  # what users.info needs


class NameBook:
    """User id -> display name, from ``lookup`` (``users.info``), cached with an expiry."""

    def __init__(self, lookup: Callable[[str], Awaitable[str | None]]) -> None:
        self.lookup = lookup
        self._names: OrderedDict[str, tuple[str | None, float]] = OrderedDict()
        self._asking: dict[str, asyncio.Task[None]] = {}  # one lookup per person at a time
        self._off_until = 0.0  # no lookups before this (monotonic): the scope is missing
        self._warned = False

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
            if error.code == "missing_scope":
                self._scope_missing()
                return
            if not error.permanent:
                return
            name = None  # user_not_found, …: asking again within the hour is no use
        except Exception as error:  # noqa: BLE001 - a name is a nicety: the id stands in for it
            log.debug("slack: no name for %s: %s", user_id, type(error).__name__)
            return
        self._names[user_id] = (name, time.monotonic() + NAME_TTL_SECONDS)
        self._names.move_to_end(user_id)
        while len(self._names) > MAX_NAMES:
            self._names.popitem(last=False)

    def _scope_missing(self) -> None:
        """Slack says the app may not read people: no lookups for an hour, one warning a process."""
        self._off_until = time.monotonic() + NAME_TTL_SECONDS
        if not self._warned:
            self._warned = True
            log.warning("slack: grant the %s scope to show people's names, not user ids", SCOPE)

    def _ask(self, user_id: str) -> asyncio.Task[None]:
        task = self._asking.get(user_id)
        if task is None:
            task = self._asking[user_id] = asyncio.ensure_future(self._fetch(user_id))
            task.add_done_callback(lambda _: self._asking.pop(user_id, None))
        return task

    def known(self, user_ids: list[str]) -> dict[str, str]:
        """The names of ``user_ids`` known already, without asking Slack (for the ack path)."""
        now = time.monotonic()
        found = {u: self._cached(u, now)[1] for u in user_ids}
        return {u: name for u, name in found.items() if name}

    async def names(self, user_ids: list[str], budget: float = LOOKUP_BUDGET_SECONDS) -> dict[str, str]:
        """The names known for ``user_ids`` after at most ``budget`` seconds of asking."""
        now = time.monotonic()
        missing = [u for u in dict.fromkeys(user_ids) if u and not self._cached(u, now)[0]]
        if missing and self._off_until <= now:
            # not cancelled at the budget's end: a late answer is kept for the next message
            await asyncio.wait([self._ask(u) for u in missing], timeout=budget)
        return self.known(user_ids)


async def named(book: NameBook, message: InboundMessage) -> InboundMessage:
    """``message`` with its sender's display name and its ``@U123`` mentions named, as far as
    ``book`` gets them within one budget; the ids stand for the names it does not get."""
    sender = message.sender
    asking = [*([] if sender.display_name else [sender.user_id]), *message.unnamed_mentions]
    if not asking:
        return message
    names = await book.names(asking)
    update: dict[str, object] = {}
    if message.unnamed_mentions:
        update = {"text": name_mentions(message.text, names), "unnamed_mentions": ()}
    if not sender.display_name and names.get(sender.user_id):
        update["sender"] = sender.model_copy(update={"display_name": names[sender.user_id]})
    return message.model_copy(update=update) if update else message
