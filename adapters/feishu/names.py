"""People's names for Feishu open_ids, looked up once and remembered.

Feishu events carry only open_ids, so without a name people read toasts such as
"Only ou_5f3e… can answer this question". The lookup needs the app's
``contact:user.base:readonly`` scope and the person inside the app's contact
range; without them the open_id stays the label. Misses are remembered too, and
once Feishu says the app lacks the scope no more lookups are made.

An ack never waits for a lookup: the receiving side reads the names known already
(``known``) and has the others looked up in the background (``warm``), for the person's
next click or toast; a message's sender, and an answer's, is named where its job runs, before
the agent reads it (``named_sender``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import Sender

log = logging.getLogger(__name__)


class ScopeMissing(Exception):
    """The app may not read people's names at all (the contact scope is not granted)."""


class NameBook:
    """open_id -> name, with a time to live, a size bound and a time limit per lookup."""

    def __init__(
        self,
        lookup: Callable[[str], Awaitable[str | None]],
        ttl_seconds: float = 3600.0,
        miss_ttl_seconds: float = 300.0,
        limit: int = 10_000,
        timeout_seconds: float = 1.0,
    ) -> None:
        self.lookup = lookup
        self.ttl_seconds = ttl_seconds
        self.miss_ttl_seconds = miss_ttl_seconds  # a slow or refused lookup is tried again sooner
        self.timeout_seconds = timeout_seconds  # events are answered within 3 s: never wait long
        self.enabled = True
        self._names: BoundedDict[str, tuple[str | None, float]] = BoundedDict(limit, refresh=True)
        self._asking: dict[str, asyncio.Task[str | None]] = {}  # one lookup per person at a time

    def _fresh(self, open_id: str) -> tuple[str | None] | None:
        """``(name,)`` while what was learnt of ``open_id`` (a name or a miss) holds, else None."""
        entry = self._names.get(open_id)
        return (entry[0],) if entry is not None and entry[1] > time.monotonic() else None

    def known(self, open_id: str) -> str | None:
        """The person's name if known already, without asking Feishu (for an ack path)."""
        fresh = self._fresh(open_id)
        return fresh[0] if fresh is not None else None

    def warm(self, open_id: str) -> None:
        """Look the name up in the background unless it is known (or being looked up)."""
        if self.enabled and self._fresh(open_id) is None:
            self._lookup(open_id)

    async def name(self, open_id: str) -> str | None:
        """The person's name, or None when Feishu will not tell (then the open_id is shown);
        a lookup already under way for them is waited for, not repeated."""
        fresh = self._fresh(open_id)
        if fresh is not None:
            return fresh[0]
        if not self.enabled:
            return None
        return await asyncio.shield(self._lookup(open_id))

    def _lookup(self, open_id: str) -> asyncio.Task[str | None]:
        task = self._asking.get(open_id)
        if task is None:
            task = self._asking[open_id] = asyncio.ensure_future(self._ask(open_id))
            task.add_done_callback(lambda _: self._asking.pop(open_id, None))
        return task

    async def _ask(self, open_id: str) -> str | None:
        try:
            name = await asyncio.wait_for(self.lookup(open_id), self.timeout_seconds)
        except ScopeMissing:
            log.warning("feishu: grant contact:user.base:readonly to show people's names, not open_ids")
            self.enabled = False
            return None
        except Exception as exc:  # slow or failing lookups fall back to the open_id
            log.info("feishu: no name for %s: %r", open_id, exc)
            name = None
        self._remember(open_id, name)
        return name

    def _remember(self, open_id: str, name: str | None) -> None:
        ttl = self.ttl_seconds if name is not None else self.miss_ttl_seconds
        self._names[open_id] = (name, time.monotonic() + ttl)


async def named_sender(book: NameBook | None, sender: Sender) -> Sender:
    """``sender`` with their name (``NameBook.name``: a lookup under way is waited for, within the
    book's time limit), asked where a job runs: a message's sender and an answer's (a card's
    callback names the operator's open_id only, named on the ack path only when known already)."""
    if sender.display_name or book is None:
        return sender
    name = await book.name(sender.user_id)
    return sender if name is None else sender.model_copy(update={"display_name": name})
