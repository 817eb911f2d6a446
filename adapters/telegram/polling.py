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

``getUpdates`` failing (``GetUpdatesTrouble``) is met by what failed, each said once and then at
most once a minute (``RepeatedWarning``):

* 409 "webhook is active" (someone set a webhook after polling began): the webhook is deleted
  again and polling goes on;
* 409 "terminated by other getUpdates request" (another instance polls with this token): the
  next rounds back off (``FAILURE_RETRIES``) and the receiver is reported down until a poll answers;
* 401 (``TELEGRAM_BOT_TOKEN`` refused): one ERROR line, the receiver reported down, and the
  token tried again every 5 minutes (``REFUSED_RETRIES``);
* anything else (5xx, the network, 429): the next round after 1 s, doubling up to a minute (never
  sooner than a flood wait), the receiver reported down once the failures last ``DOWN_AFTER``
  seconds (2 minutes) and up again when a poll answers.

The backoff is between rounds, not inside one (the lease is renewed every round): the waits are
``RetryPolicy.wait``'s, the project's one retry policy.

The bot reads a ``getUpdates`` batch update by update (``PolledBot``): one it cannot read is
skipped with a warning and the others are handled, as the webhook answers such an update 400.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import uuid
from collections import deque
from collections.abc import Sequence
from typing import Any

from telegram import Bot, Update
from telegram._utils.defaultvalue import DEFAULT_NONE, DefaultValue
from telegram._utils.types import JSONDict, ODVInput, TimePeriod
from telegram.error import Conflict, InvalidToken, RetryAfter, TelegramError
from telegram.ext import ExtBot

from clarigate.gateway.boundary.outage import StoreOutage, unreachable
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import inbound_events
from clarigate.gateway.runtime.repeated import RepeatedWarning, clock

from .receive import MalformedUpdate, UpdateHandler, read_update
from .send import MAX_FLOOD_WAIT, PLATFORM, once, patiently, retry_seconds

log = logging.getLogger(__name__)

LEASE_NAME = "telegram-poller"
OFFSET_KEY = "poll-offset"
OFFSET_TTL = 7 * 24 * 3600
MAX_TRIES = 3
#: The updates asked for (getUpdates, setWebhook); ``chat_member``, members leaving a group
#: (``departures``), comes only to a bot that is an admin there.
ALLOWED_UPDATES = ["message", "callback_query", "chat_member"]
#: getUpdates failing (5xx, the network, a rate limit, another poller): the next round 1 s after
#: the first failure, doubling up to a minute apart (spread, so that replicas do not ask in step).
FAILURE_RETRIES = RetryPolicy(first=1.0, cap=60.0, jitter=0.1)
#: The token refused (401): asked again every 5 minutes, until Telegram takes it (a new token).
REFUSED_RETRIES = RetryPolicy(first=300.0, cap=300.0, jitter=0.1)
#: getUpdates failing this many seconds in a row: the receiver is reported down (/healthz fails).
DOWN_AFTER = 120.0
#: The same trouble is said at most once per this many seconds (with how many were not said).
LINE_EVERY = 60.0
REFUSED, OTHER_POLLER, FAILING = "refused", "other poller", "failing"
#: Unreadable updates remembered, not to be said again when their batch comes again (an update
#: before them failed, or the store is down).
UNREAD_KEPT = 100


class PolledBot(ExtBot[None]):
    """PTB's ``ExtBot``, reading a ``getUpdates`` batch update by update as the webhook reads one
    (``read_update``).

    PTB builds the whole batch at once: one update it cannot build (a poll from a Bot API server
    older than 9.6, without the options' ``persistent_id`` PTB 22.8 requires) failed the call, the
    offset never moved past it, every later update was stuck, and PTB logged the raw batch (what
    people wrote) at CRITICAL each round. Here such an update comes back as an ``Update`` holding
    its ``update_id`` only, as PTB makes of a kind of update it does not know: nothing is handled,
    the offset moves past it, and one WARNING names its id and what failed, never what it holds
    (counted: ``clarigate_inbound_events_total{platform="telegram",kind="unreadable"}``).
    """

    __slots__ = ("_unread",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        with self._unfrozen():
            self._unread: deque[int] = deque(maxlen=UNREAD_KEPT)

    async def get_updates(
        self,
        offset: int | None = None,
        limit: int | None = None,
        timeout: TimePeriod | None = None,  # noqa: ASYNC109 (PTB's signature, the long poll's)
        allowed_updates: Sequence[str] | None = None,
        *,
        read_timeout: ODVInput[float] = DEFAULT_NONE,
        write_timeout: ODVInput[float] = DEFAULT_NONE,
        connect_timeout: ODVInput[float] = DEFAULT_NONE,
        pool_timeout: ODVInput[float] = DEFAULT_NONE,
        api_kwargs: JSONDict | None = None,
    ) -> tuple[Update, ...]:
        """``Bot.get_updates``'s call, its answer read one update at a time (``MalformedUpdate``
        when an update has no ``update_id`` to skip it by)."""
        data: JSONDict = {
            "timeout": timeout,
            "offset": offset,
            "limit": limit,
            "allowed_updates": allowed_updates,
        }
        # as PTB does: the read timeout given (else the getUpdates request's) plus the long poll's
        given = self._request[0].read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        waited = timeout.total_seconds() if isinstance(timeout, dt.timedelta) else timeout or 0
        result = await self._post(
            "getUpdates",
            data,
            read_timeout=(given or 0) + waited,
            write_timeout=write_timeout,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
            api_kwargs=api_kwargs,
        )
        updates = tuple(self._read(item) for item in result)
        for update in updates:
            self.insert_callback_data(update)
        return updates

    def _read(self, item: object) -> Update:
        try:
            return read_update(item, self)
        except MalformedUpdate as exc:
            update_id = item.get("update_id") if isinstance(item, dict) else None
            if not isinstance(update_id, int) or isinstance(update_id, bool):
                raise
            if update_id not in self._unread:
                self._unread.append(update_id)
                inbound_events(PLATFORM, "unreadable").inc()
                log.warning(
                    "telegram update %d skipped: it cannot be read (%s); the updates after it are handled",
                    update_id,
                    exc.reason,
                )
            return Update(update_id=update_id)


class GetUpdatesTrouble:
    """What ``getUpdates`` failed with, rounds in a row: the wait before the next round, the lines
    said, and whether the receiver is down (see the module docstring)."""

    def __init__(self, token: str = "") -> None:
        self.token = token
        self.kind: str | None = None  # REFUSED, OTHER_POLLER or FAILING; None while it answers
        self.failures = 0  # rounds in a row
        self.since = 0.0  # ``clock()`` at the first of them
        self._lines: dict[str, RepeatedWarning] = {}

    def down(self) -> bool:
        """Whether the receiver is to be reported down (``/healthz`` fails)."""
        if self.kind in (REFUSED, OTHER_POLLER):
            return True
        return self.kind == FAILING and clock() - self.since >= DOWN_AFTER

    def said(self, exc: TelegramError) -> str:
        """The failure as a log line may hold it (never the token)."""
        text = str(exc)
        return text.replace(self.token, "***") if self.token else text

    def warn(self, kind: str, message: str, *args: object) -> None:
        """``message`` said now, or counted when one of ``kind`` was said less than a minute ago."""
        self._lines.setdefault(kind, RepeatedWarning(log, LINE_EVERY)).warning(message, *args)

    def failed(self, exc: TelegramError) -> float:
        """Count a failed round and say it; returns the seconds to wait before the next one."""
        kind = (
            REFUSED
            if isinstance(exc, InvalidToken)
            else OTHER_POLLER
            if isinstance(exc, Conflict)
            else FAILING
        )
        if self.kind is None:
            self.since = clock()
        new, self.kind = kind != self.kind, kind
        self.failures += 1
        if kind == REFUSED:
            wait = REFUSED_RETRIES.wait(self.failures)
            if new:  # said once: nothing changes until the token does
                log.error(
                    "telegram getUpdates: Telegram refuses TELEGRAM_BOT_TOKEN (%s): no update is received "
                    "and the receiver is reported down; tried again every %.0f s",
                    self.said(exc),
                    REFUSED_RETRIES.cap,
                )
            return wait
        wait = FAILURE_RETRIES.wait(self.failures)
        if isinstance(exc, RetryAfter):
            wait = max(wait, min(retry_seconds(exc), MAX_FLOOD_WAIT))
        if kind == OTHER_POLLER:
            self.warn(
                kind,
                "telegram getUpdates: another instance polls getUpdates with this bot's token (%s); "
                "Telegram serves one only: the receiver is reported down and polls again in %.1f s",
                self.said(exc),
                wait,
            )
        else:
            self.warn(kind, "telegram getUpdates failed: %s (next try in %.1f s)", self.said(exc), wait)
        return wait

    def answered(self) -> None:
        """A round answered: the trouble, if any, is over (said once)."""
        if self.kind is not None:
            log.info(
                "telegram getUpdates answers again (after %d failed round(s) over %.0f s)",
                self.failures,
                clock() - self.since,
            )
        self.kind, self.failures = None, 0
        self._lines.clear()


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
        self.trouble = GetUpdatesTrouble(getattr(bot, "token", ""))
        self.outage = StoreOutage(
            log=log,
            while_down="Telegram updates are left unconfirmed and fetched again",
            when_back="Telegram updates are handled as usual",
        )

    @property
    def running(self) -> bool:
        """True while the polling task runs (holding the lease or waiting for it) and ``getUpdates``
        works: False while Telegram refuses the token, another instance polls with it, or
        ``getUpdates`` has failed for ``DOWN_AFTER`` seconds (``GetUpdatesTrouble.down``)."""
        return self._task is not None and not self._task.done() and not self.trouble.down()

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
            # the next round is the retry (one call per round), after the wait the failure calls for
            await self._failed(exc)
            return 0
        self.trouble.answered()
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

    async def _failed(self, exc: TelegramError) -> None:
        """A failed ``getUpdates``: a webhook set meanwhile deleted again, else waited out."""
        if isinstance(exc, Conflict) and "webhook" in exc.message.lower():
            self.trouble.warn(
                "webhook",
                "telegram getUpdates: a webhook was set for this bot while it polls (%s): deleting it "
                "again (polling mode: TELEGRAM_WEBHOOK_URL unset; set it everywhere to use the webhook)",
                self.trouble.said(exc),
            )
            try:
                await patiently(lambda: self.bot.delete_webhook(), "deleteWebhook")
                return
            except TelegramError as failure:
                exc = failure
        await self._wait(self.trouble.failed(exc))

    async def _wait(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)
        except TimeoutError:
            pass
