"""Notes only one member of a group sees: Feishu's cards "仅对你可见" (only visible to you).

``POST /open-apis/ephemeral/v1/send`` (``chat_id``, ``open_id``, ``msg_type`` "interactive",
``card``) shows a card to that member of a group alone; it answers its ``message_id``
(``ephemeral/v1/delete`` takes it away). Feishu documents its limits: ordinary groups only,
never a topic group (话题群: refused, code 18053 "chat can not be thread") nor a one-to-one chat;
the card sits in the chat, not in a thread (the call takes no root); it notifies no one and
shows only on the member's clients that are online.

A note goes there in a group, as the one call the open API client makes (its token, pool and
classification: ``open_api``). A failure for now (a 5xx, a rate limit, the network) is raised
for the core's one retry policy; a refusal (a topic group, the bot not allowed, a code we do not
know) returns None and the caller posts the note as before, a reply mentioning them in the
conversation: the note is never dropped. A chat refused as a topic group is remembered (per
chat, in this process) and not asked again. The call takes no ``uuid``: a note sent under a key
(a click Feishu delivers again) is remembered in this process, and sent once.
"""

from __future__ import annotations

import logging
import re

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import Conversation, MessageRef

from .open_api import FeishuApiError, OpenApiClient
from .receive import PLATFORM
from .render import Card

log = logging.getLogger(__name__)

#: The ephemeral-card endpoint.
SEND_URI = "/open-apis/ephemeral/v1/send"
#: Refused because the chat is a topic group (话题群), where Feishu has no ephemeral cards.
TOPIC_GROUP_CODES = {18053}
#: Chats remembered as refusing ephemeral cards, and notes sent by key, at most.
CHATS_REMEMBERED = 2000
#: A person's open_id, the one id the note is sent to here.
OPEN_ID = re.compile(r"ou_[A-Za-z0-9]{1,64}")


class EphemeralNotes:
    """Sends a note to one member of a group as a card only they see, where Feishu can."""

    def __init__(self, client: OpenApiClient) -> None:
        self.client = client
        self._refused: BoundedDict[str, None] = BoundedDict(CHATS_REMEMBERED, refresh=True)
        self._sent: BoundedDict[str, MessageRef] = BoundedDict(CHATS_REMEMBERED, refresh=True)

    async def send(
        self, conversation: Conversation, open_id: str, card: Card, key: str | None = None
    ) -> MessageRef | None:
        """Show ``card`` to ``open_id`` alone in the conversation's group (once per ``key``); None
        where Feishu will not (a one-to-one chat, a topic group, no open_id, a refusal): the caller
        posts it as before."""
        chat_id = conversation.chat_id
        if conversation.is_direct or not OPEN_ID.fullmatch(open_id) or chat_id in self._refused:
            return None
        if key is not None and key in self._sent:
            return self._sent[key]
        body = {"chat_id": chat_id, "open_id": open_id, "msg_type": "interactive", "card": card}
        try:
            data = await self.client.call("POST", SEND_URI, body, quiet=True)
        except FeishuApiError as exc:
            if not exc.permanent:
                log.warning("feishu: a card only they see failed for now (%s)", exc)
                raise  # the core tries the note again
            if exc.feishu_code in TOPIC_GROUP_CODES:
                self._refused[chat_id] = None
            log.warning("feishu: no card only they see in chat %s (%s): replying in the chat", chat_id, exc)
            return None
        message_id, extra = str(data.get("message_id") or ""), {"ephemeral": "1", "receiver": open_id}
        ref = MessageRef(platform=PLATFORM, chat_id=chat_id, message_id=message_id, extra=extra)
        if key is not None:
            self._sent[key] = ref
        return ref
