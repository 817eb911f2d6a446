"""The conversation's language, which the replies to a person's commands follow: the words after
the command, else the open question's, else the language of the last request the person wrote in
the chat thread (recorded here), else the platform's language for the person, else English.

``ConversationLocale`` is a part of ``clarigate.gateway.flow.commands.Control``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.flow.notices import language_hint, locale_for, text_locale
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord, SavedState

if TYPE_CHECKING:  # annotations only: ``commands`` builds ``Control`` on this module
    from clarigate.gateway.flow.commands import Command

log = logging.getLogger("clarigate.gateway.flow.commands")  # the commands' lines keep the name logs know


def command_locale(
    msg: InboundMessage,
    command: Command,
    pending: PendingRecord | None = None,
    last: Locale | None = None,
) -> Locale:
    """The language to answer a command in, following the conversation: the words after it (not
    /start's payload, a code), else the open question's, else the language of the last request the
    person wrote here (``last``), else the platform's language for the person, else English.
    """
    asked: Locale | None = pending.request.locale if pending is not None else None
    return locale_for(msg.text, asked or last or language_hint(msg.language))


def _locale_key(conv: Conversation, sender: Sender) -> str:
    """State key (``{prefix}:state:locale:<chat thread>:<user>``): the language ``sender`` last
    wrote in on ``conv``, which command replies follow."""
    return f"locale:{conv.thread_key}:{sender.user_id}"


class ConversationLocale:
    """The language of a person's requests in a conversation (mixed into ``Control``)."""

    config: GatewayConfig
    store: Store

    def locale_of(self, msg: InboundMessage) -> SavedState | None:
        """The language request ``msg`` is written in (when its words show one) as the state that
        records it, for the replies to the person's later commands in this conversation; kept as
        long as the chat thread's agent thread is (saved by the thread lookup when the message
        runs as a request with no question open, else by ``remember_locale``)."""
        locale = text_locale(msg.text)
        if locale is None:
            return None
        return _locale_key(msg.conversation, msg.sender), locale, self.config.thread_ttl_seconds

    async def remember_locale(self, msg: InboundMessage) -> None:
        """Record the language request ``msg`` is written in (``locale_of``), when it shows one."""
        state = self.locale_of(msg)
        if state is None:
            return
        try:
            await self.store.set_json(*state)
        except Exception as exc:  # noqa: BLE001 (a nicety: commands then answer by the other signs)
            log.warning("recording the language of message %s failed: %s", msg.event_id, exc)

    async def written_locale(self, msg: InboundMessage) -> Locale | None:
        """The language of the last message ``msg``'s sender wrote in its conversation, if known."""
        locale = await self.store.get_json(_locale_key(msg.conversation, msg.sender))
        return locale if locale in ("en", "zh") else None
