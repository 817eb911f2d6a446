"""Where a message goes and in what form, when Feishu refuses the usual one.

- A group's replies go as thread replies to the message that started the conversation. A
  group that refuses thread replies (230071) gets them in the chat instead, as replies quoting
  that message, from then on (remembered per chat in this process): a reply to one of them
  keeps the conversation's root, so it comes back to the same conversation.
- A reply to a message that is gone (the person recalled it, 230011; or unknown, 230001) is
  posted in the chat.
- The thread reply, the quoting reply and the post in the chat are forms of one message: all
  carry the item's ``uuid``, so Feishu takes at most one of them. A retry of a reply Feishu took
  (its answer lost) whose root was recalled since is refused, and its post is absorbed.
- A reply's card that Feishu will not show (230099, every time: its content breaks a rule
  we did not foresee) is sent as a plain text message, as a question's text goes when its
  card is refused: the person gets the words, never nothing.
- A note for one member of a group is a card only they see (``ephemeral``); where Feishu will not
  show one (a topic group, a refusal) it is a reply mentioning them alone.

Also the "Working…" cards waiting for the reply that takes their place, and the ``uuid`` of
each part of a reply split over several cards.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.port import AdapterState

from .ephemeral import EphemeralNotes
from .open_api import FeishuApiError
from .p2p_threads import remember_post
from .receive import PLATFORM
from .render import card_json, render_notice
from .send import MESSAGE_GONE_CODES, FeishuSender

log = logging.getLogger(__name__)

#: Feishu: this chat does not take replies in a thread (a reply there is refused).
THREAD_REFUSED_CODE = 230071
#: Feishu would not make a card of the content ("Failed to create card content").
CARD_REFUSED_CODES = {230099}
#: Chats remembered as refusing thread replies, at most.
CHATS_REMEMBERED = 2000
#: Marks a "Working…" card whose edit into the reply failed once for now (``MessageRef.extra``).
EDIT_FAILED = "edit_failed"


def part_key(key: str | None, index: int) -> str | None:
    """The ``uuid`` of card ``index`` of a reply split over several: the item's own for the first."""
    if key is None or index == 0:
        return key
    return derived_key(key, str(index))


def derived_key(key: str | None, variant: str) -> str | None:
    """Another ``uuid`` made from ``key`` (the same on every retry): for a second form of one item."""
    return None if key is None else str(uuid.uuid5(uuid.NAMESPACE_URL, f"{key}/{variant}"))


#: What opens an ``<at …>`` tag or closes one (any case, spaces inside; as an entity too, should
#: Feishu decode one there): Feishu reads ``<at user_id="…">`` (``"all"``: everyone) in text.
_AT_TAG = re.compile(r"(?:<|&lt;|&#0*60;|&#x0*3c;)(?=\s*/?\s*at(?![a-z0-9_-]))", re.IGNORECASE)


def text_content(text: str) -> str:
    """The ``content`` of a ``text`` message showing ``text`` as written.

    Feishu reads ``<at user_id="…">`` tags in text messages: the ``<`` of each becomes the
    look-alike ``‹``, so model text mentions no one; every other ``<`` stays (``a <= b``).
    """
    return json.dumps({"text": _AT_TAG.sub("\u2039", text)}, ensure_ascii=False)


def card_refused(exc: FeishuApiError) -> bool:
    """True when Feishu refused a message because it would not make a card of its content."""
    return exc.feishu_code in CARD_REFUSED_CODES


class Destinations:
    """Sends a message where the conversation's replies go: the thread (groups, a p2p thread) or
    the chat (p2p); a quoting reply in the chat in a group that refuses thread replies."""

    def __init__(self, sender: FeishuSender, state: Callable[[], AdapterState] | None = None) -> None:
        self.sender = sender
        self.state = state  # notes the bot's posts in the chat (``p2p_threads``)
        self.ephemeral = EphemeralNotes(sender)  # notes one member of a group alone sees
        self._no_threads: BoundedDict[str, None] = BoundedDict(CHATS_REMEMBERED, refresh=True)

    async def deliver(
        self,
        conversation: Conversation,
        content: str,
        key: str | None = None,
        extra: dict[str, str] | None = None,
        msg_type: str = "interactive",
    ) -> MessageRef:
        """Post ``content`` (a card, a card entity, or ``text_content``) where replies go; ``key``
        is its ``uuid`` in whichever form it goes (a thread reply, a quoting reply, a post)."""
        chat_id = conversation.chat_id
        message_id, quote = None, conversation.reply_to  # the message a reply in the chat quotes
        # a p2p thread too: its own, or one under the bot's post (``p2p_threads``, no topic)
        in_thread = not conversation.is_direct or conversation.topic is not None or quote is not None
        if conversation.reply_to and (not in_thread or chat_id not in self._no_threads):
            try:
                message_id = await self.sender.reply_message(
                    conversation.reply_to, content, in_thread=in_thread, key=key,
                    msg_type=msg_type,
                )  # fmt: skip
            except FeishuApiError as exc:
                if exc.feishu_code in MESSAGE_GONE_CODES:  # recalled (撤回): nothing to quote either
                    log.warning("feishu: the message to reply to is gone (%s): posting in the chat", exc.code)
                    quote = None
                elif exc.feishu_code == THREAD_REFUSED_CODE:
                    log.warning("feishu: chat %s refuses thread replies: replying in the chat", chat_id)
                    self._remember(chat_id)
                else:
                    raise
        if message_id is None and quote:
            # a quoting reply, in the chat: it keeps the conversation's root, so a reply to it
            # (a typed answer, /cancel) comes back to the same conversation
            try:
                message_id = await self.sender.reply_message(
                    quote, content, in_thread=False, key=key, msg_type=msg_type
                )
            except FeishuApiError as exc:
                if exc.feishu_code not in MESSAGE_GONE_CODES:
                    raise
                log.warning("feishu: the message to quote is gone (%s): posting in the chat", exc.code)
        if message_id is None:
            message_id = await self.sender.post_message(chat_id, content, key=key, msg_type=msg_type)
            if self.state is not None:  # a thread under it goes on with this conversation
                await remember_post(self.state(), conversation, message_id)
        return MessageRef(platform=PLATFORM, chat_id=chat_id, message_id=message_id, extra=extra or {})

    async def note(self, conversation: Conversation, user_id: str, text: str, once: str) -> MessageRef:
        """``text`` for one person: in a group, a card only they see (``ephemeral``); where Feishu
        will not show one (a topic group, a refusal) or in a one-to-one chat, where the
        conversation's replies go, in a group mentioning them alone; as text when Feishu will not
        make a card of it. ``once`` keys it: the same note is posted once (Feishu's ``uuid``)."""
        key = derived_key(once, "note")
        if conversation.chat_type is None and not conversation.is_direct:  # where a card was clicked
            conversation = await self.direct_or_not(conversation)
        private = await self.ephemeral.send(conversation, user_id, render_notice(text), key)
        if private is not None:
            return private
        card = render_notice(text, to=None if conversation.is_direct else user_id)
        try:
            return await self.deliver(conversation, card_json(card), key)
        except FeishuApiError as exc:
            if not card_refused(exc):
                raise
            return await self.deliver_text(conversation, text, key)

    async def direct_or_not(self, conversation: Conversation) -> Conversation:
        """A conversation of a chat whose kind is not known, as a one-to-one chat's (its chat, no
        thread) when Feishu says it is one (``chat_mode`` "p2p": a card forwarded into it)."""
        if await self.sender.chat_mode(conversation.chat_id) != "p2p":
            return conversation
        return Conversation(
            platform=PLATFORM, workspace=conversation.workspace, chat_id=conversation.chat_id,
            is_direct=True, chat_type="private",
        )  # fmt: skip

    async def deliver_text(self, conversation: Conversation, text: str, key: str | None) -> MessageRef:
        """``text`` as a plain text message (a card Feishu refused): a ``uuid`` of its own."""
        return await self.deliver(conversation, text_content(text), derived_key(key, "text"), msg_type="text")

    def _remember(self, chat_id: str) -> None:
        self._no_threads[chat_id] = None


class WorkingCards:
    """Finished "Working…" cards by conversation, waiting for the reply that replaces them.

    In process memory on purpose: the "done" and the replies of one run are sent
    by the same worker, one after the other.
    """

    def __init__(self, limit: int = 1000) -> None:
        self._cards: BoundedDict[str, MessageRef] = BoundedDict(limit, refresh=True)

    def put(self, key: str, ref: MessageRef) -> None:
        """Remember the finished card of conversation ``key`` (oldest dropped beyond ``limit``)."""
        self._cards[key] = ref

    def take(self, key: str) -> MessageRef | None:
        """The card waiting in conversation ``key``, forgotten once taken."""
        return self._cards.pop(key, None)

    async def show(
        self, sender: FeishuSender, key: str, card: dict[str, Any], closed: dict[str, Any]
    ) -> MessageRef | None:
        """The card waiting in conversation ``key`` edited into ``card``: its ref; None when there is
        none, or when it cannot show ``card`` (post that anew): Feishu refused the edit for good (the
        card is gone or cannot be edited) or it failed again on the core's retry. Then the card is
        recalled, else made to show ``closed``, so it does not say "Working…" for good. An edit
        that failed for now (a 5xx, a rate limit, the network) is raised, the card kept for the
        retry."""
        working = self.take(key)
        if working is None:
            return None
        try:
            await sender.update_card(working.message_id, card)
            return working
        except FeishuApiError as exc:
            if not exc.permanent and EDIT_FAILED not in working.extra:
                self.put(key, working.model_copy(update={"extra": {**working.extra, EDIT_FAILED: "1"}}))
                raise
            log.warning("feishu: the working card cannot show the reply (%s): posting it anew", exc.code)
        try:
            await sender.delete_message(working.message_id)
            return None
        except FeishuApiError as exc:
            log.warning("feishu: could not recall the working card (%s): closing it instead", exc.code)
        try:
            await sender.update_card(working.message_id, closed)
        except FeishuApiError as exc:
            log.warning("feishu: could not close the working card (%s)", exc.code)
        return None
