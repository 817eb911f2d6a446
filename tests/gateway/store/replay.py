"""The replay scenarios' registry (``test_store_replay``): what a scenario works with, and the
scenarios by store method. Scenarios are registered in ``test_store_replay`` and ``replay_state``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from redis.asyncio import Redis

from clarigate.gateway.store.keys import GROUP
from clarigate.gateway.store.redis import RedisStore

from ..redis_proxy import ReplyDroppingProxy


@dataclass
class Replay:
    """What a scenario works with: the store behind the proxy, a plain client, the proxy."""

    store: RedisStore
    raw: Redis
    proxy: ReplyDroppingProxy

    def key(self, name: str) -> str:
        return f"{self.store.prefix}:{name}"

    def lose_reply_to(self, marker: str | bytes) -> None:
        self.proxy.arm(marker)

    async def pending_of(self, consumer: str) -> list[str]:
        """Entry ids delivered to ``consumer`` and not acknowledged."""
        rows = await self.raw.xpending_range(self.key("jobs"), GROUP, "-", "+", 100, consumer)
        return [row["message_id"] for row in rows]


Scenario = Callable[[Replay], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(*methods: str) -> Callable[[Scenario], Scenario]:
    """Register ``fn`` as the replay of ``methods``."""

    def register(fn: Scenario) -> Scenario:
        for method in methods:
            SCENARIOS[method] = fn
        return fn

    return register
