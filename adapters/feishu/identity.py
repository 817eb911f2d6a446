"""The bot's own open_id: kept in the store once learnt, and the messages that cannot be read without it.

Which of a group message's mentions is the bot's is told by the bot's open_id, which Feishu tells
at start (``bot/v3/info``, ``startup``). It does not change for an app, so once learnt it is kept
in the store (``KeptIdentity``: one key per app under the bot's prefix, renewed at each start that
learns it) and a later start uses it at once, while Feishu confirms it in the background: a
restart during an outage of Feishu's open API still tells the bot's mentions apart. The embedded
store keeps nothing across a restart.

With no identity known at all (the first start while Feishu's open API is out of reach, or refuses
to tell it), a group message mentioning someone is not taken (``IdentityUnknown``) but left for
Feishu to push again: the webhook is answered 503, the long connection's frame 500 (lark-oapi's
ws client answers so when the handler raises). Feishu pushes an event not answered 200 within 3 s
again 15 s, 5 min, 1 h and 6 h later (4 times, about 7 hours), to any of the app's long
connections; each push again is read anew, with the identity known by then. The first such
message is said at WARNING, the others at DEBUG, and one line says when the identity is known.
Feishu's last push (the event over ``LAST_PUSH_AGE_SECONDS`` old) is taken all the same, as
addressed to the bot (a group message reaches a bot when it mentions it, unless the app may read
all group messages): no message is lost when the identity stays unknown for over 7 hours.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from clarigate.gateway.boundary.port import AdapterState

log = logging.getLogger("clarigate.adapters.feishu.receive")

#: The store's key of an app's bot open_id (under the bot's prefix, as adapter state).
KEPT_KEY = "feishu:bot_open_id:{app_id}"
#: How long the kept open_id lives without a start that learns it again (each one renews it).
KEEP_SECONDS = 400 * 24 * 3600
#: An event older than this (``header.create_time``) is Feishu's last push of it: the one before
#: comes about an hour after the first, the last about 6 h after that.
LAST_PUSH_AGE_SECONDS = 3 * 3600


def last_push(payload: dict[str, Any]) -> bool:
    """Whether Feishu will push this event no more (its ``header.create_time``, ms, long past)."""
    header = payload.get("header")
    try:
        created = int(str(header.get("create_time"))) / 1000 if isinstance(header, dict) else None
    except ValueError:
        return False
    return created is not None and time.time() - created > LAST_PUSH_AGE_SECONDS


class KeptIdentity:
    """The bot's open_id as the store keeps it for one app; a failure is logged, never raised."""

    def __init__(self, state: Callable[[], AdapterState], app_id: str) -> None:
        self.state = state  # read at each use: an adapter may be built before its gateway is
        self.key = KEPT_KEY.format(app_id=app_id)

    async def recall(self) -> str | None:
        """The open_id kept by an earlier start, or None (none kept, or the store failed)."""
        try:
            kept = await self.state().get_json(self.key)
        except Exception as exc:
            log.warning("feishu: the bot's identity kept in the store could not be read: %s", _short(exc))
            return None
        return kept if isinstance(kept, str) and kept else None

    async def keep(self, open_id: str) -> None:
        """Keep ``open_id`` (what Feishu told) for the next start."""
        try:
            await self.state().set_json(self.key, open_id, KEEP_SECONDS)
        except Exception as exc:
            log.warning("feishu: the bot's identity could not be kept in the store: %s", _short(exc))


class IdentityUnknown(Exception):
    """A group message mentioning someone while the bot's identity is unknown: not taken, answered
    so that Feishu pushes it again."""

    WORDS = "not taken, the bot's identity is not known yet: Feishu pushes it again"

    def __init__(self) -> None:
        super().__init__(self.WORDS)


class Deferrals:
    """The group messages left for Feishu to push again while the bot's identity is unknown: the
    first one said at WARNING, the others at DEBUG, and one line once the identity is known."""

    def __init__(self) -> None:
        self.count = 0

    def one(self) -> IdentityUnknown:
        """One more message left for later: the exception to raise to the receive mode."""
        self.count += 1
        if self.count == 1:
            log.warning(
                "feishu: group messages mentioning someone are not taken until the bot's identity is "
                "known (which mention is the bot's cannot be told): Feishu pushes them again later"
            )
        else:
            log.debug("feishu: a group message mentioning someone was left for Feishu to push again")
        return IdentityUnknown()

    def taken(self) -> None:
        """Feishu's last push of a message, taken as said to the bot though its identity is unknown."""
        log.warning(
            "feishu: a group message Feishu pushes for the last time is taken as said to the bot "
            "(the bot's identity is still not known)"
        )

    def over(self) -> None:
        """The identity is known: said once if messages were left for later."""
        if self.count:
            log.info(
                "feishu: the bot's identity is known: group messages Feishu pushes again are taken "
                "(%d left for it to push again)",
                self.count,
            )
            self.count = 0


def _short(exc: Exception) -> str:
    """A failure on one line: its type, and its text's first line."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
