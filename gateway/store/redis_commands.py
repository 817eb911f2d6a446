"""What every part of the Redis store sends through: its two clients and the round-trip count.

Lost replies: the client re-sends a command whose connection failed, so every script the store
runs through ``_run`` / ``_command`` must be safe to run twice (see ``Store``). Reads that
deliver stream entries are not, and go over ``_reads``, a client that never re-sends
(``redis_jobs``).
"""

from __future__ import annotations

from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .base import Store
from .connection import open_redis
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

    def _script(self, source: str) -> Script:
        """``source`` registered on the client that re-sends after a lost reply."""
        return self._redis.register_script(source)

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a script; it is re-sent after a lost reply, so it must recognize its own earlier effect."""
        self.round_trips += 1
        # EVALSHA straight, as ``script(keys, args, client=…)`` does, without its per-call checks
        # for pipeline clients (a ``Protocol`` isinstance, ~10 µs of a message's CPU)
        try:
            return await self._redis.evalsha(script.sha, len(keys), *keys, *args)
        except NoScriptError:  # a restarted or new server: load it, as redis-py's script would
            script.sha = await self._redis.script_load(script.script)
            return await self._redis.evalsha(script.sha, len(keys), *keys, *args)

    async def _command(self, *args: str | int) -> Any:
        """Send one command (re-sent after a lost reply, so only commands safe to repeat)."""
        self.round_trips += 1
        return await self._redis.execute_command(*args)


def fields_of(flat: list[str]) -> dict[str, str]:
    """A stream entry's or a hash's fields from Redis' flat ``[name, value, …]`` list."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
