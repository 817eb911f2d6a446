"""Long polling for deployments without a public URL, one poller across replicas.

``getUpdates`` allows a single consumer per bot, so replicas share a lease in the
gateway's state: the holder polls and renews it every round; the others wait. A
holder that dies stops renewing, its lease expires, and another replica takes
over from the offset the holder last stored (updates it handled but did not
confirm come again and are dropped by the core's dedupe on ``update_id``).

An update the store (Redis) cannot take is not confirmed: the offset stays before it, and it is
fetched again round after round until Redis is back (an outage never counts towards giving an
update up). The log says so once per outage, and once when it is over; a failure that is not an
outage is logged with its traceback.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from telegram import Bot, Update
from telegram.error import RetryAfter, TelegramError

from clarigate.gateway.boundary.outage import StoreOutage, unreachable
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.runtime.logs import log_platform_call

from .receive import UpdateHandler
from .send import MAX_FLOOD_WAIT, PLATFORM, once, patiently, retry_seconds

log = logging.getLogger(__name__)

LEASE_NAME = "telegram-poller"
OFFSET_KEY = "poll-offset"
OFFSET_TTL = 7 * 24 * 3600
MAX_TRIES = 3
ALLOWED_UPDATES = ["message", "callback_query"]


class LeasedPoller:
    """Polls ``getUpdates`` while holding the lease; hands every update to ``handle``."""

    def __init__(
        self,
        bot: Bot,
        state: AdapterState,
        handle: UpdateHandler,
        lease_ttl: int = 30,
        poll_timeout: int = 10,
        holder: str | None = None,
    ) -> None:
        self.bot = bot
        self.state = state
        self.handle = handle
        self.lease_ttl = lease_ttl
        # The long poll must end well before the lease does, or another replica would start polling.
        self.poll_timeout = max(0, min(poll_timeout, lease_ttl // 3))
        self.holder = holder or f"poller-{uuid.uuid4().hex[:12]}"
        self.holding = False
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._started = False
        self._failures: dict[int, int] = {}
        self.outage = StoreOutage(
            log=log,
            while_down="Telegram updates are left unconfirmed and fetched again",
            when_back="Telegram updates are handled as usual",
        )

    @property
    def running(self) -> bool:
        """True while the polling task runs (holding the lease or waiting for it)."""
        return self._task is not None and not self._task.done()

    @property
    def started(self) -> bool:
        """True once ``start`` was called here (a worker process never calls it)."""
        return self._started

    def start(self) -> None:
        """Begin competing for the lease in the background."""
        self._started = True
        self._stopping.clear()
        self._task = asyncio.create_task(self._run(), name=f"telegram-poller-{self.holder}")

    async def stop(self) -> None:
        """Stop polling and give the lease up, so another replica takes over at once."""
        self._stopping.set()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        if self.holding:
            self.holding = False
            await self.state.release_lease(LEASE_NAME, self.holder)

    async def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                if await self.state.acquire_lease(LEASE_NAME, self.holder, self.lease_ttl):
                    if not self.holding:
                        log.info("telegram poller %s holds the lease", self.holder)
                        self.holding = True
                        # getUpdates fails while a webhook is set; polling mode means none is wanted.
                        await patiently(lambda: self.bot.delete_webhook(), "deleteWebhook")
                    await self.poll_once()
                else:
                    self.holding = False
                    await self._wait(self.lease_ttl / 3)
                await self.outage.answered()  # the store answered this round
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not self.outage.met("telegram polling round", exc):
                    log.exception("telegram polling round failed")
                await self._wait(1.0)

    async def poll_once(self) -> int:
        """One ``getUpdates`` round from the stored offset; returns how many updates were handled."""
        offset = await self.state.get_json(OFFSET_KEY)
        try:
            updates: tuple[Update, ...] = await once(
                lambda: self.bot.get_updates(
                    offset=offset,
                    timeout=self.poll_timeout,
                    read_timeout=self.poll_timeout + 5,
                    allowed_updates=ALLOWED_UPDATES,
                ),
                "getUpdates",
                log_ok=False,
            )
        except TelegramError as exc:
            # the next round is the retry (one call per round): after Telegram's flood wait if it named one
            wait = min(retry_seconds(exc), MAX_FLOOD_WAIT) if isinstance(exc, RetryAfter) else 1.0
            log.warning("telegram getUpdates failed: %s", exc)
            await self._wait(wait)
            return 0
        if updates:  # an empty long poll ends every few seconds while nobody writes: debug only
            log_platform_call(PLATFORM, "getUpdates", f"ok, {len(updates)} update(s)")
        else:
            log.debug("telegram getUpdates: ok, no update")
        for update in updates:
            try:
                await self.handle(update)
            except Exception as exc:
                if unreachable(exc):  # the store is down: fetched again once it is back, never given up
                    raise
                # Left unconfirmed, the update comes again next round; one that keeps
                # failing is given up so it cannot stall every update behind it.
                tries = self._failures[update.update_id] = self._failures.get(update.update_id, 0) + 1
                if tries < MAX_TRIES:
                    raise
                log.exception("telegram update %s failed %d times: skipped", update.update_id, tries)
            self._failures.pop(update.update_id, None)
            # Stored after each update: a takeover re-reads at most the one in flight.
            await self.state.set_json(OFFSET_KEY, update.update_id + 1, OFFSET_TTL)
        return len(updates)

    async def _wait(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)
        except TimeoutError:
            pass
