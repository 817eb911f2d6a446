"""What every part of the Redis store sends through: its two clients and the round-trip count.

Lost replies: the client re-sends a command whose connection failed, so every script the store
runs through ``_run`` / ``_command`` must be safe to run twice (see ``Store``). Reads that
deliver stream entries are not, and go over ``_reads``, a client that never re-sends
(``redis_jobs``). The calls a webhook's request makes go over a third client that re-sends more
often, within the request's deadline (``deadline``): one retry policy per call path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .base import Store
from .connection import WEBHOOK_RETRIES, open_redis
from .deadline import StoreDeadlinePassed, current_deadline
from .keys import StoreKeys

#: Errors after which a command may or may not have run.
LOST = (RedisConnectionError, RedisTimeoutError)

#: A Lua script of the store, run by its SHA1 (loaded on the first ``NOSCRIPT``).
Script = AsyncScript


class RedisCommands(Store):
    """The clients of a store under ``prefix`` and the ways to send to them; does not connect."""

    def __init__(self, url: str, prefix: str) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0
        # retries ride out a Redis restart or failover; a Redis that is down is reported within seconds
        self._redis = open_redis(url)
        # reads of new jobs are never re-sent (``redis_jobs``)
        self._reads = open_redis(url, retries=0)
        # a webhook's calls ride out a restart or failover within the ack (connects on first use)
        self._webhook = open_redis(url, retries=WEBHOOK_RETRIES)

    def _script(self, source: str) -> Script:
        """``source`` registered on the client that re-sends after a lost reply."""
        return self._redis.register_script(source)

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a script; it is re-sent after a lost reply, so it must recognize its own earlier effect."""
        self.round_trips += 1

        # EVALSHA straight, as ``script(keys, args, client=…)`` does, without its per-call checks
        # for pipeline clients (a ``Protocol`` isinstance, ~10 µs of a message's CPU)
        async def run(client: Redis) -> Any:
            try:
                return await client.evalsha(script.sha, len(keys), *keys, *args)
            except NoScriptError:  # a restarted or new server: load it, as redis-py's script would
                script.sha = await client.script_load(script.script)
                return await client.evalsha(script.sha, len(keys), *keys, *args)

        return await self._send(run)

    async def _command(self, *args: str | int) -> Any:
        """Send one command (re-sent after a lost reply, so only commands safe to repeat)."""
        self.round_trips += 1
        return await self._send(lambda client: client.execute_command(*args))

    async def _send(self, call: Callable[[Redis], Awaitable[Any]]) -> Any:
        """``call`` on the re-sending client; within a webhook's request on its own client, given
        up when the request's deadline passes (redis-py drops a connection cut off mid-call)."""
        deadline = current_deadline()
        if deadline is None:
            return await call(self._redis)
        timeout = asyncio.timeout_at(deadline.at)
        try:
            async with timeout:
                return await call(self._webhook)
        except TimeoutError:
            if not timeout.expired():
                raise
            raise StoreDeadlinePassed(f"no answer within the request's {deadline.seconds:g} s") from None


def fields_of(flat: list[str]) -> dict[str, str]:
    """A stream entry's or a hash's fields from Redis' flat ``[name, value, …]`` list."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
