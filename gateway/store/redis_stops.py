"""The Redis store's stop channel: one Pub/Sub channel, subscribed only by processes that ran an
agent (``/cancel`` stopping a run on another replica).

Pub/Sub keeps nothing: a process whose subscription is being made again (a lost connection, Redis
restarting) would miss a stop published meanwhile. So a stop (``publish_stop(…, keep=True)``,
only ``/cancel``) is also recorded, before it is published, in ``{prefix}:stops-log`` (a sorted set
by time, kept ``STOPS_KEPT`` seconds); each time its subscription is confirmed, the listener reads
the stops recorded since it last knew itself subscribed and hands on those it did not hear (one
published as it subscribed comes both ways: handed on once).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from .redis_jobs import RedisJobStream

log = logging.getLogger(__name__)

#: How long a stop stays recorded for a process whose subscription comes back (seconds).
STOPS_KEPT = 60
#: How long before it last knew itself subscribed a listener reads recorded stops from (seconds): a
#: connection is found lost only after a while, and two hosts' clocks differ a little.
STOPS_MARGIN = 10.0
#: At most how many recorded stops a subscription coming back reads (the latest).
STOPS_REPLAYED = 100


class RedisStopChannel(RedisJobStream):
    """Publishing on and listening to ``{prefix}:stops``."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        self._stops: asyncio.Task[None] | None = None  # the stop channel's listener (``listen_stops``)
        self._stops_ready = asyncio.Event()
        self._stop_listeners: list[Callable[[dict[str, Any]], None]] = []
        self._stops_heard: deque[str] = deque(maxlen=2 * STOPS_REPLAYED)  # (not handed on twice)
        self._stops_replayed: deque[str] = deque(maxlen=STOPS_REPLAYED)  # (not again as published)
        self._stops_alive = 0.0  # when the listener last knew itself subscribed (unix time)
        self._stops_began = 0.0  # when the listener started: no stop from before is its to hear
        self._keeps_stops = True  # False once the Redis user may not record or read stops

    async def publish_stop(self, message: dict[str, Any], keep: bool = False) -> int:
        """Send ``message`` on the stop channel (a ``/cancel``: rare, one round trip); how many
        processes listen. ``keep``: recorded first, for a listener subscribing again meanwhile."""
        data, channel = json.dumps(message), f"{self.prefix}:stops"
        if not keep or not self._keeps_stops:
            return int(await self._command("PUBLISH", channel, data))
        self.round_trips += 1
        kept, *_, published = await self._send(lambda client: self._keep_and_publish(client, data))
        if isinstance(kept, NoPermissionError):
            self._no_stops_log(kept)
        if isinstance(published, Exception):
            raise published
        return int(published)

    async def _keep_and_publish(self, client: Redis, data: str) -> list[Any]:
        """Record ``data`` in the stops' log (trimmed to ``STOPS_KEPT``), then publish it: one
        pipeline (a re-sent one records the same member again and publishes again, as a re-sent
        ``PUBLISH`` would); each command's answer or error."""
        now_ms, kept_ms, key = time.time() * 1000, STOPS_KEPT * 1000, f"{self.prefix}:stops-log"
        async with client.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {data: now_ms})
            pipe.zremrangebyscore(key, "-inf", now_ms - kept_ms)
            pipe.pexpire(key, kept_ms)
            pipe.publish(f"{self.prefix}:stops", data)
            return await pipe.execute(raise_on_error=False)  # type: ignore[no-any-return]

    def _no_stops_log(self, exc: Exception) -> None:
        """The Redis user may not record or read stops (an ACL older than the stops' log): said
        once; stops are published as before, and missed while a subscription is made again."""
        if self._keeps_stops:
            log.warning(
                "the Redis user may not use %s:stops-log (%s): a stop published while a process "
                "subscribes again is lost; see the ACL line in deploy/README.md",
                self.prefix,
                exc,
            )
        self._keeps_stops = False

    async def listen_stops(self, deliver: Callable[[dict[str, Any]], None]) -> None:
        """Subscribe this process to the stop channel, once (no command per message after);
        returns once subscribed (at most a few seconds)."""
        self._stop_listeners.append(deliver)
        if self._stops is None or self._stops.done():
            self._stops_ready = asyncio.Event()
            self._stops = asyncio.create_task(self._listen_stops(), name="listen-stops")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(3.0):
                await self._stops_ready.wait()

    async def _listen_stops(self) -> None:
        """Hear the stop channel; Redis away, subscribed again once it is back (told once per
        outage); a Redis user not allowed Pub/Sub (an ACL older than ``/cancel`` stopping runs),
        told once: ``/cancel`` then stops only the runs of this process."""
        failing, self._stops_alive = False, time.time()
        self._stops_began = self._stops_alive
        while True:
            try:
                async with self._redis.pubsub() as pubsub:
                    await pubsub.subscribe(f"{self.prefix}:stops")
                    self._stops_ready.set()
                    if failing:
                        log.info("listening for stopped runs again")
                        failing = False
                    async for message in pubsub.listen():
                        if message.get("type") == "subscribe":  # (again, after a lost connection too)
                            await self._replay_stops()
                        elif isinstance(message.get("data"), str):
                            self._stops_alive = time.time()
                            self._heard_live(message["data"])
            except asyncio.CancelledError:
                raise
            except NoPermissionError as exc:
                self._stops_ready.set()
                log.warning(
                    "the Redis user may not subscribe to %s:stops (%s): /cancel stops only the runs of "
                    "this process; see the ACL line in deploy/README.md",
                    self.prefix,
                    exc,
                )
                return
            except Exception as exc:  # noqa: BLE001 (Redis away: subscribed again once it is back)
                if not failing:
                    log.warning("listening for stopped runs failed (%s): trying again", exc)
                failing = True
                await asyncio.sleep(1.0)

    async def _replay_stops(self) -> None:
        """Subscribed (again): hand on the stops recorded since the listener last knew itself
        subscribed (less ``STOPS_MARGIN``) that it did not hear, oldest first; never one from
        before the listener started (not this process's to hear: the run it stopped is elsewhere,
        or over), the first subscription or a later one."""
        since = max(self._stops_alive - STOPS_MARGIN, self._stops_began)
        since_ms, now = f"({since * 1000!r}", time.time()  # (exclusive: not one written as it began)
        if not self._keeps_stops:
            self._stops_alive = now
            return
        try:
            args = ("+inf", since_ms, "BYSCORE", "REV", "LIMIT", 0, STOPS_REPLAYED)
            recorded = await self._command("ZRANGE", f"{self.prefix}:stops-log", *args)
        except NoPermissionError as exc:
            self._no_stops_log(exc)
            recorded = []
        self._stops_alive = now  # (not before: a read that failed is made again from the same time)
        for data in reversed(recorded):
            if data not in self._stops_heard:
                self._stops_replayed.append(data)
                self._heard_stop(data)

    def _heard_live(self, data: str) -> None:
        """A message as published: handed on, unless it is a stop handed on already as recorded
        (published as the listener subscribed: heard both ways). Only stops are recorded: answers
        alike from two processes are both handed on."""
        if data in self._stops_replayed:
            self._stops_replayed.remove(data)
            return
        self._heard_stop(data)

    def _heard_stop(self, data: str) -> None:
        self._stops_heard.append(data)
        try:
            message = json.loads(data)
        except ValueError:
            return
        for deliver in list(self._stop_listeners):
            try:
                deliver(message)
            except Exception:  # noqa: BLE001 (one listener's fault stops no other)
                log.exception("a stop message could not be handled")

    async def _stop_listening(self) -> None:
        """End the stop channel's listener, if any (``close``)."""
        if self._stops is not None:
            self._stops.cancel()
            await asyncio.gather(self._stops, return_exceptions=True)
            self._stops = None
