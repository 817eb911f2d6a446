"""One retry policy: how a failed call is tried again, for every caller that tries again.

Adapters make one attempt per platform call and classify its failure
(``clarigate.gateway.boundary.port.DeliveryFailed``: transient, with the platform's
``retry_after`` when it named one, or permanent). Whoever retries does so here, on tenacity,
so that retries never nest: one transient failure costs one platform call per attempt made
here. The callers are delivery (``flow.delivery``), the store writes that follow a send,
``serve``'s start-up waits, the start-up calls adapters make before they receive, and
Telegram's edits deferred after a flood wait.

A ``RetryPolicy`` says how long to wait (doubling from ``first`` up to ``cap``, optionally
jittered, never sooner than the failure's ``retry_after``) and when to stop (after
``attempts``, ``within`` seconds of the first attempt, by a wall-clock ``deadline``, or when
the platform asks for a wait longer than ``longest_wait``). A permanent failure, a
cancellation, or anything ``retry_on`` rejects is raised at once; when the policy stops, the
last failure is raised as it was.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed

T = TypeVar("T")
P = TypeVar("P")

#: Told of each retry before its wait: (the attempt that failed, 1-based; its failure; seconds to wait).
OnRetry = Callable[[int, BaseException, float], None]
Sleep = Callable[[float], Awaitable[None]]
#: How long the parts of a reply posted so far are remembered (longer than any delivery budget).
PARTS_TTL = 24 * 3600


def transient(failure: BaseException) -> bool:
    """Whether another attempt may help: any error but a permanent ``DeliveryFailed``
    (a cancellation, or any other ``BaseException``, never)."""
    if not isinstance(failure, Exception):
        return False
    return not (isinstance(failure, DeliveryFailed) and failure.permanent)


def retry_after(failure: BaseException | None) -> float:
    """The wait the platform asked for with this failure (0 when it named none)."""
    if isinstance(failure, DeliveryFailed) and failure.retry_after:
        return max(float(failure.retry_after), 0.0)
    return 0.0


async def pause(seconds: float) -> None:
    """The wait between two attempts (looked up at each wait, so tests can record it)."""
    await asyncio.sleep(seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """How a failed call is tried again: the waits between attempts and when to stop."""

    first: float = 0.5  # seconds before the second attempt; doubling after that
    cap: float = 30.0  # the longest wait of our own (a platform's ``retry_after`` may be longer)
    jitter: float = 0.0  # each wait of our own is spread by ± this fraction
    attempts: int | None = None  # at most this many attempts in all
    within: float | None = None  # no attempt later than this many seconds after the first
    # the wait before the last attempt shortened so that it comes at ``within`` (not given up early)
    fill_within: bool = False
    longest_wait: float | None = None  # a platform asking for a longer wait is taken as "stop"

    def wait(self, failed_attempt: int, failure: BaseException | None = None) -> float:
        """Seconds to wait after attempt ``failed_attempt`` (1-based) failed with ``failure``."""
        own = min(self.first * 2 ** (failed_attempt - 1), self.cap)
        if self.jitter:
            own *= random.uniform(1 - self.jitter, 1 + self.jitter)  # noqa: S311 (spreading, not security)
        return max(own, retry_after(failure))

    def _stops(self, state: RetryCallState, deadline: float | None) -> bool:
        failure = state.outcome.exception() if state.outcome is not None else None
        upcoming = state.upcoming_sleep
        return (
            (self.attempts is not None and state.attempt_number >= self.attempts)
            or (self.longest_wait is not None and retry_after(failure) > self.longest_wait)
            or (self.within is not None and (state.seconds_since_start or 0.0) + upcoming > self.within)
            or (deadline is not None and time.time() + upcoming > deadline)
        )

    def retrying(
        self,
        *,
        deadline: float | None = None,
        retry_on: Callable[[BaseException], bool] = transient,
        on_retry: OnRetry | None = None,
        sleep: Sleep | None = None,
    ) -> AsyncRetrying:
        """A tenacity ``AsyncRetrying`` for this policy (``deadline``: a ``time.time()`` to stop by,
        the same on every replica; ``sleep``: the wait, ``pause`` by default)."""

        def before_sleep(state: RetryCallState) -> None:
            if on_retry is not None and state.outcome is not None:
                failure = state.outcome.exception()
                assert failure is not None  # noqa: S101 (only failures are retried)
                on_retry(state.attempt_number, failure, state.upcoming_sleep)

        async def wait_a_while(seconds: float) -> None:
            await (sleep or pause)(seconds)

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome is not None else None
            seconds = self.wait(state.attempt_number, failure)
            if self.fill_within and self.within is not None:
                seconds = max(min(seconds, self.within - (state.seconds_since_start or 0.0)), 0.0)
            return seconds

        return AsyncRetrying(
            retry=retry_if_exception(retry_on),
            wait=wait,
            stop=lambda state: self._stops(state, deadline),
            before_sleep=before_sleep,
            sleep=wait_a_while,
            reraise=True,
        )

    async def call(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        deadline: float | None = None,
        retry_on: Callable[[BaseException], bool] = transient,
        on_retry: OnRetry | None = None,
        sleep: Sleep | None = None,
        failed_first: BaseException | None = None,
    ) -> T:
        """Await ``attempt()`` until it succeeds or the policy stops (see the module docstring).

        ``failed_first``: an attempt made already (by the caller, at once) failed with this; the
        policy starts with the wait that follows it, and counts it as the first attempt.

        The first attempt is made straight away: tenacity's machinery is built only once it failed
        with something worth another attempt (nearly every call succeeds at once), its clock
        started when that attempt was.
        """
        policy = self
        if failed_first is None:
            started = time.monotonic()
            try:
                return await attempt()
            except BaseException as failure:
                if not retry_on(failure):
                    raise
                failed_first = failure
            if self.within is not None:  # the first attempt's time counts against ``within``
                policy = replace(self, within=self.within - (time.monotonic() - started))
        return await policy._retried(attempt, failed_first, deadline, retry_on, on_retry, sleep)

    async def _retried(
        self,
        attempt: Callable[[], Awaitable[T]],
        failed_first: BaseException,
        deadline: float | None,
        retry_on: Callable[[BaseException], bool],
        on_retry: OnRetry | None,
        sleep: Sleep | None,
    ) -> T:
        """The attempts after ``failed_first``, on tenacity."""
        pending: BaseException | None = failed_first
        retrying = self.retrying(deadline=deadline, retry_on=retry_on, on_retry=on_retry, sleep=sleep)
        async for trial in retrying:
            with trial:
                if pending is not None:
                    failure, pending = pending, None
                    raise failure
                return await attempt()
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover


async def post_each_once(
    state: AdapterState | None,
    delivery_id: str | None,
    parts: Sequence[P],
    post: Callable[[P], Awaitable[Any]],
    way: str = "",
) -> list[Any]:
    """Post ``parts`` in order (``post`` returns a JSON-able record of the message it posted),
    skipping those an earlier attempt of the same delivery posted already; returns every record.

    A reply split over several messages is one item to the core: when part 3 fails and the core
    tries again, parts 1 and 2 are not posted twice. ``delivery_id`` (or ``state``) None: nothing
    remembered;
    ``way``: which way of posting the item this is (a live message's rest, or the reply anew),
    so one way's parts are never taken for another's.
    """
    key = f"parts-posted:{delivery_id}{way}" if state and delivery_id and len(parts) > 1 else None
    done: list[Any] = list(await state.get_json(key) or []) if state and key else []
    for part in parts[len(done) :]:
        done.append(await post(part))
        if state and key:
            await state.set_json(key, done, PARTS_TTL)
    return done
