"""The channel threads the bot takes part in: a plain reply there (no mention) is for the bot.

The bot takes part in a thread that has an agent thread or a job accepted there and not yet
done (a mention whose run has not started: ``GatewayPort.knows_conversation``), or that someone
called it into by a bare mention (a mark in the adapter's state, ``thread:<thread key>``, kept a
week). All are in the store: while it is unreachable a plain reply cannot be told apart from
chatter. It is refused then (Slack delivers it again), except on Slack's last delivery, which
would be lost: that one is marked ``only_in_known_thread`` and kept like any last delivery
(``gateway/flow/kept.py``). Where its job runs, once the store answers, the core looks for an
agent thread and then asks ``known_thread`` for the mark; a reply in a thread the bot takes no
part in is dropped there without a word, counted as ignored like the chatter it is.
"""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, InboundMessage
from clarigate.gateway.boundary.outage import unreachable
from clarigate.gateway.boundary.port import GatewayPort

from .receive import ParsedMessage, count_ignored

log = logging.getLogger(__name__)

KNOWN_THREAD_SECONDS = 7 * 24 * 3600  # a thread opened by a bare mention stays the bot's this long


class KnownThreads:
    """Which channel threads the bot takes part in, read and marked in the store."""

    def __init__(self, gateway: GatewayPort) -> None:
        self.gateway = gateway

    @staticmethod
    def _key(conversation: Conversation) -> str:
        return f"thread:{conversation.thread_key}"

    async def called_in(self, conversation: Conversation) -> None:
        """A bare mention called the bot into this thread: it takes part from now on."""
        await self.gateway.state.set_json(self._key(conversation), True, KNOWN_THREAD_SECONDS)

    async def _marked(self, conversation: Conversation) -> bool:
        return await self.gateway.state.get_json(self._key(conversation)) is not None

    async def knows(self, conversation: Conversation) -> bool:
        """The bot takes part in this thread: it has an agent thread or a job waiting there
        (``knows_conversation``), or was called in by a bare mention."""
        return await self.gateway.knows_conversation(conversation) or await self._marked(conversation)

    async def for_the_bot(self, parsed: ParsedMessage, last_delivery: bool) -> InboundMessage | None:
        """The message if it is for the bot (a plain reply only in a thread it takes part in),
        else None; Slack's ``last_delivery`` of a reply the store cannot look up is marked
        ``only_in_known_thread`` for the job to tell. Any other failure is raised."""
        message = parsed.message
        if last_delivery:  # refused now, Slack drops it: the core may keep it
            message = message.model_copy(update={"last_delivery": True})
        if not parsed.needs_known_thread:
            return message
        try:
            known = await self.knows(message.conversation)
        except Exception as exc:
            if not (last_delivery and unreachable(exc)):
                raise
            return message.model_copy(update={"only_in_known_thread": True})
        return message if known else None

    async def kept_reply_known(self, message: InboundMessage) -> bool:
        """``PlatformAdapter.known_thread``: a kept reply in a thread without an agent thread is
        the bot's if a bare mention called it in; else it is dropped, counted as ignored."""
        if await self._marked(message.conversation):
            return True
        log.debug("slack: kept reply %s acknowledged, not for the bot", message.event_id)
        count_ignored("event:message")
        return False
