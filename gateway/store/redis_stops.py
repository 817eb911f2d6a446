"""The Redis store's stop channel: one Pub/Sub channel, subscribed only by processes that ran an
agent (``/cancel`` stopping a run on another replica)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from redis.exceptions import NoPermissionError

from .redis_jobs import RedisJobStream

log = logging.getLogger(__name__)


class RedisStopChannel(RedisJobStream):
    """Publishing on and listening to ``{prefix}:stops``."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        self._stops: asyncio.Task[None] | None = None  # the stop channel's listener (``listen_stops``)
        self._stops_ready = asyncio.Event()
        self._stop_listeners: list[Callable[[dict[str, Any]], None]] = []

    async def publish_stop(self, message: dict[str, Any]) -> int:
        """Send ``message`` on the stop channel (a ``/cancel``: rare, one command); how many
        processes listen."""
        return int(await self._command("PUBLISH", f"{self.prefix}:stops", json.dumps(message)))

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
        failing = False
        while True:
            try:
                async with self._redis.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(f"{self.prefix}:stops")
                    self._stops_ready.set()
                    if failing:
                        log.info("listening for stopped runs again")
                        failing = False
                    async for message in pubsub.listen():
                        if isinstance(message.get("data"), str):
                            self._heard_stop(message["data"])
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

    def _heard_stop(self, data: str) -> None:
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
