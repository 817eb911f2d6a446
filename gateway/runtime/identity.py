"""One bot id, one identity: each platform's identity is recorded under the bot id in Redis.

Two deployments sharing a bot id share its stream and state: each would answer the other's
messages with its own token. So at start each enabled platform's identity (its settings'
``identity()``: Slack's team and bot user, Feishu's app id, Telegram's bot id) is recorded at
``<bot_id>:identity`` the first time, and a later start whose identity differs refuses, naming
both. Found before any adapter
starts receiving; ``clarigate admin identity --forget PLATFORM`` clears one after a real move.
"""

from __future__ import annotations

import json
import time
from typing import Any

from clarigate.gateway.runtime.config import GatewayConfig


def identity_key(bot_id: str) -> str:
    """The Redis hash of a bot's identities (field: platform, value: a JSON record)."""
    return f"{bot_id}:identity"


async def platform_identities(config: GatewayConfig) -> dict[str, str]:
    """The identity of each enabled platform that can tell it, as ``platform -> "who"``.

    Each platform's settings say who the bot is (``PlatformSettings.identity``): from what is
    configured where it can (a Telegram token's bot id, a Feishu app id), else by one call.
    """
    found: dict[str, str] = {}
    for platform in config.enabled_platforms():
        section = config.platform(platform)
        try:
            who = await section.identity() if section is not None else None
        except Exception:  # a bad token or the platform unreachable: the adapter's start says it plainly
            continue
        if who:
            found[platform] = who
    return found


class IdentityClash(Exception):
    """Another identity is recorded under this bot id for a platform."""


async def claim_identities(redis_url: str, bot_id: str, identities: dict[str, str]) -> None:
    """Record ``identities`` under ``bot_id`` (first start) or check them against the recorded ones.

    Raises ``IdentityClash`` naming the platform, both identities and what to do.
    """
    if not identities:
        return
    from clarigate.gateway.store.connection import open_redis

    client = open_redis(redis_url)  # as the store connects: Sentinel, TLS, retries
    key = identity_key(bot_id)
    try:
        for platform, who in identities.items():
            record = json.dumps({"who": who, "since": int(time.time())})
            await client.hsetnx(key, platform, record)  # atomic: two first starts cannot both win
            recorded = _who(await client.hget(key, platform))
            if recorded != who:
                raise IdentityClash(clash_message(bot_id, platform, recorded, who))
    finally:
        await client.aclose()


def clash_message(bot_id: str, platform: str, recorded: str | None, who: str) -> str:
    """What ``serve`` says (and ``doctor``) when ``recorded`` holds ``platform`` under ``bot_id``
    and this deployment is ``who`` there."""
    return (
        f"bot id {bot_id!r} already belongs to {platform} {recorded}, but this deployment is "
        f"{platform} {who}: give this bot its own CLARIGATE_BOT_ID (or, if the bot really moved, "
        f"run `clarigate admin identity --forget {platform}`)"
    )


async def identity_clashes(client: Any, bot_id: str, identities: dict[str, str]) -> list[str]:
    """What ``claim_identities`` would refuse, in its words, read only (nothing is recorded): one
    line per platform of ``identities`` whose recorded identity under ``bot_id`` is another."""
    recorded = await recorded_identities(client, bot_id)
    return [
        clash_message(bot_id, platform, recorded[platform].get("who"), who)
        for platform, who in identities.items()
        if platform in recorded and recorded[platform].get("who") != who
    ]


async def recorded_identities(client: Any, bot_id: str) -> dict[str, dict[str, Any]]:
    """What is recorded under ``bot_id``: ``platform -> {"who": …, "since": epoch seconds}``."""
    raw = await client.hgetall(identity_key(bot_id))
    return {_text(k): json.loads(_text(v)) for k, v in raw.items()}


def _who(raw: Any) -> str | None:
    return json.loads(_text(raw)).get("who") if raw is not None else None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
