"""One bot id, one identity: each platform's identity is recorded under the bot id in Redis.

Two deployments sharing a bot id share its stream and state: each would answer the other's
messages with its own token. So at start each enabled platform's identity (its settings'
``identity()``: Slack's team and bot user, Feishu's app id, Telegram's bot id) is recorded at
``<bot_id>:identity`` the first time, and a later start whose identity differs refuses, naming
both. The other way round too: each identity is recorded at ``_clarigate:identities`` (one
hash shared by all bots on the Redis, field ``"<platform> <who>"``, value the bot id's JSON
record; no bot id can start with ``_``, so no bot's prefix reaches it), in the same script, and
a start under another bot id with an identity already claimed there refuses, naming both bot
ids. Neither record expires. Found before any adapter starts receiving; ``clarigate admin
identity --forget PLATFORM`` (under the bot id that holds it) clears both after a real move.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from clarigate.gateway.runtime.config import GatewayConfig

log = logging.getLogger(__name__)

OWNERS_KEY = "_clarigate:identities"
"""The Redis hash of which bot id holds each platform identity, shared by every bot on the Redis
(field: ``"<platform> <who>"``, value: ``{"bot_id": …, "since": …}``). Bot ids start with a letter
or digit (``GatewayConfig.bot_id``), so this key is outside every bot's ``<bot_id>:`` prefix."""

# KEYS: the bot's identity hash, OWNERS_KEY; ARGV: platform, who, bot id, its record, the owner
# record, the owner field. Checks both ways before writing either, so a refusal records nothing.
# Safe to re-send after a lost reply: its own earlier effect reads as a restart.
_CLAIM = """
local recorded = redis.call('HGET', KEYS[1], ARGV[1])
if recorded then
  local was = cjson.decode(recorded).who
  if was ~= ARGV[2] then return {'recorded', tostring(was)} end
end
local owner = redis.call('HGET', KEYS[2], ARGV[6])
if owner then
  local other = cjson.decode(owner).bot_id
  if other ~= ARGV[3] then return {'owner', tostring(other)} end
end
if not recorded then redis.call('HSET', KEYS[1], ARGV[1], ARGV[4]) end
if not owner then redis.call('HSET', KEYS[2], ARGV[6], ARGV[5]) end
return {'ok', ''}
"""

# KEYS: the bot's identity hash, OWNERS_KEY; ARGV: platform, bot id. Forgets the platform's
# identity under the bot id and every claim of it by the bot id (even one whose forward record is
# gone); returns how many records went.
_FORGET = """
local gone = redis.call('HDEL', KEYS[1], ARGV[1])
local owners = redis.call('HGETALL', KEYS[2])
for i = 1, #owners, 2 do
  if string.sub(owners[i], 1, #ARGV[1] + 1) == ARGV[1] .. ' '
      and cjson.decode(owners[i + 1]).bot_id == ARGV[2] then
    gone = gone + redis.call('HDEL', KEYS[2], owners[i])
  end
end
return gone
"""


def identity_key(bot_id: str) -> str:
    """The Redis hash of a bot's identities (field: platform, value: a JSON record)."""
    return f"{bot_id}:identity"


def owner_field(platform: str, who: str) -> str:
    """The field of ``OWNERS_KEY`` for ``who`` on ``platform`` (``"telegram bot 111"``)."""
    return f"{platform} {who}"


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
    """Another identity is recorded under this bot id for a platform, or this identity under
    another bot id."""


async def claim_identities(redis_url: str, bot_id: str, identities: dict[str, str]) -> None:
    """Record ``identities`` under ``bot_id`` (first start) or check them against the recorded ones.

    Each identity is also claimed for ``bot_id`` at ``OWNERS_KEY``, in one script with the
    record (two first starts cannot both win). Raises ``IdentityClash`` naming the platform, both
    identities (or both bot ids) and what to do.
    """
    if not identities:
        return
    from redis.exceptions import NoPermissionError

    from clarigate.gateway.store.connection import open_redis

    client = open_redis(redis_url)  # as the store connects: Sentinel, TLS, retries
    claim = client.register_script(_CLAIM)
    try:
        for platform, who in identities.items():
            since = int(time.time())
            record = json.dumps({"who": who, "since": since})
            owner = json.dumps({"bot_id": bot_id, "since": since})
            keys = [identity_key(bot_id), OWNERS_KEY]
            args = [platform, who, bot_id, record, owner, owner_field(platform, who)]
            try:
                verdict, other = (_text(part) for part in await claim(keys, args))
            except NoPermissionError:  # an ACL user from before the shared hash: this bot's own check
                verdict, other = await _own_record_only(client, bot_id, platform, who, record)
            if verdict == "recorded":
                raise IdentityClash(clash_message(bot_id, platform, other, who))
            if verdict == "owner":
                raise IdentityClash(owner_clash_message(bot_id, platform, who, other))
    finally:
        await client.aclose()


async def _own_record_only(client: Any, bot_id: str, platform: str, who: str, record: str) -> tuple[str, str]:
    """The check under ``bot_id`` alone, for a Redis user the shared hash is closed to (its ACL
    predates ``OWNERS_KEY``): said once, so the operator can open it (deploy/README)."""
    log.warning(
        "the Redis user may not read %s: whether another bot id runs %s %s is not checked "
        "(add ~%s to the user's ACL keys, deploy/README)",
        OWNERS_KEY,
        platform,
        who,
        OWNERS_KEY,
    )
    key = identity_key(bot_id)
    await client.hsetnx(key, platform, record)  # atomic: two first starts cannot both win
    recorded = _who(await client.hget(key, platform))
    return ("recorded", str(recorded)) if recorded != who else ("ok", "")


async def forget_identity(client: Any, bot_id: str, platform: str) -> int:
    """Forget ``platform``'s identity under ``bot_id`` and ``bot_id``'s claim of it, in one script
    (``clarigate admin identity --forget``); how many records went (0: none was there)."""
    forget = client.register_script(_FORGET)
    return int(await forget([identity_key(bot_id), OWNERS_KEY], [platform, bot_id]))


def clash_message(bot_id: str, platform: str, recorded: str | None, who: str) -> str:
    """What ``serve`` says (and ``doctor``) when ``recorded`` holds ``platform`` under ``bot_id``
    and this deployment is ``who`` there."""
    return (
        f"bot id {bot_id!r} already belongs to {platform} {recorded}, but this deployment is "
        f"{platform} {who}: give this bot its own CLARIGATE_BOT_ID (or, if the bot really moved, "
        f"run `clarigate admin identity --forget {platform}`)"
    )


def owner_clash_message(bot_id: str, platform: str, who: str, owner: str) -> str:
    """What ``serve`` says (and ``doctor``) when ``platform``'s ``who`` is claimed by bot id
    ``owner`` on this Redis and this deployment runs it under ``bot_id``."""
    return (
        f"{platform} {who} already belongs to bot id {owner!r} on this Redis, but this deployment "
        f"runs it as bot id {bot_id!r}: two bot ids on one {platform} bot each take its messages, "
        f"so give this deployment its own {platform} credentials (or, if the bot really moved, run "
        f"`clarigate admin identity --forget {platform}` with CLARIGATE_BOT_ID={owner})"
    )


async def identity_clashes(client: Any, bot_id: str, identities: dict[str, str]) -> list[str]:
    """What ``claim_identities`` would refuse, in its words, read only (nothing is recorded): one
    line per platform of ``identities`` whose recorded identity under ``bot_id`` is another, or
    that another bot id claimed."""
    recorded = await recorded_identities(client, bot_id)
    clashes = []
    for platform, who in identities.items():
        if platform in recorded and recorded[platform].get("who") != who:
            clashes.append(clash_message(bot_id, platform, recorded[platform].get("who"), who))
            continue
        raw = await client.hget(OWNERS_KEY, owner_field(platform, who))
        owner = json.loads(_text(raw)).get("bot_id") if raw is not None else None
        if owner is not None and owner != bot_id:
            clashes.append(owner_clash_message(bot_id, platform, who, owner))
    return clashes


async def recorded_identities(client: Any, bot_id: str) -> dict[str, dict[str, Any]]:
    """What is recorded under ``bot_id``: ``platform -> {"who": …, "since": epoch seconds}``."""
    raw = await client.hgetall(identity_key(bot_id))
    return {_text(k): json.loads(_text(v)) for k, v in raw.items()}


def _who(raw: Any) -> str | None:
    return json.loads(_text(raw)).get("who") if raw is not None else None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
