"""Notes only one member of a group sees: Bot API 10.2's ephemeral messages, where the server has them.

``sendMessage`` with ``receiver_user_id`` (and ``callback_query_id`` when a tap led to it) shows a
message to that member only; it can be edited and deleted (``editEphemeralMessageText``,
``deleteEphemeralMessage``) by its ``ephemeral_message_id``. python-telegram-bot 22.8 speaks Bot
API 10.0, so the call goes through PTB's own request machinery (``Bot.do_api_request``: its
request, timeouts and error classes) and its answer is read as JSON.

Whether the server has them is asked once per process, before the first note and never by sending
one: an older Bot API ignores parameters it does not know, so a note sent with
``receiver_user_id`` there would reach the whole group. The probe deletes an ephemeral message
that does not exist: a server that knows the method refuses with 400, an older one answers 404
("Not Found": PTB's ``EndPointNotFound``). Where they are missing, a note goes as before (a
reply in the group); a probe that failed for another reason (the network) is asked again next
time.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from telegram.constants import ParseMode
from telegram.error import BadRequest, EndPointNotFound, InvalidToken, TelegramError

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.runtime.logs import log_platform_call

from .render import TelegramMessage
from .send import NO_PREVIEW, PLATFORM, TelegramSender, once

log = logging.getLogger(__name__)

#: An ephemeral message id no chat has: the probe's deletion of it tells a new server from an old one.
PROBE_MESSAGE_ID = 2**31 - 1


class EphemeralNotes:
    """Sends a note to one member of a group as an ephemeral message, where the Bot API can."""

    def __init__(self, sender: TelegramSender) -> None:
        self.sender = sender
        self.known: bool | None = None  # None until the server was asked

    async def supported(self, chat_id: int, user_id: int) -> bool:
        """True when the Bot API server has ephemeral messages (asked once, then remembered)."""
        if self.known is None:
            self.known = await self._probe(chat_id, user_id)
            if self.known is not None:
                log.info("telegram: ephemeral messages %s", "supported" if self.known else "not supported")
        return bool(self.known)

    async def _probe(self, chat_id: int, user_id: int) -> bool | None:
        params = {"chat_id": chat_id, "receiver_user_id": user_id, "ephemeral_message_id": PROBE_MESSAGE_ID}
        try:
            await self.sender.bot.do_api_request("deleteEphemeralMessage", api_kwargs=params)
        except (EndPointNotFound, InvalidToken):
            return False  # the method is unknown here: an older Bot API
        except BadRequest:
            return True  # known, and the message is not there: as asked
        except TelegramError as exc:
            log.warning("telegram: could not tell whether ephemeral messages work (%s)", exc)
            return None
        return True

    async def send(
        self,
        conversation: Conversation,
        user_id: str,
        message: TelegramMessage,
        callback_query_id: str | None = None,
    ) -> MessageRef | None:
        """Show ``message`` to ``user_id`` only; None where the server has no ephemeral messages
        (or the person is no numeric user): the caller sends the note as before."""
        if conversation.is_direct or not user_id.lstrip("-").isdigit():
            return None
        place = self.sender.placement(conversation)
        chat_id = int(await self.sender.moves.target(str(place.pop("chat_id"))))
        if not await self.supported(chat_id, int(user_id)):
            return None
        params: dict[str, Any] = {
            "chat_id": chat_id,
            "receiver_user_id": int(user_id),
            "text": message.text,
            "parse_mode": ParseMode.HTML,
            "link_preview_options": NO_PREVIEW,  # ``do_api_request`` adds no ``Defaults``
            **{k: v for k, v in place.items() if k in ("message_thread_id", "direct_messages_topic_id")},
        }
        if callback_query_id:
            params["callback_query_id"] = callback_query_id
        if message.reply_markup is not None:
            params["reply_markup"] = message.reply_markup
        sent = await once(lambda: self._send(params), "sendMessage (ephemeral)")
        ephemeral_id = str((sent or {}).get("ephemeral_message_id") or (sent or {}).get("message_id") or "")
        log_platform_call(PLATFORM, "ephemeral note", "ok", ephemeral_id)
        extra = {"ephemeral": "1", "receiver": user_id}
        return MessageRef(platform=PLATFORM, chat_id=str(chat_id), message_id=ephemeral_id, extra=extra)

    async def _send(self, params: dict[str, Any]) -> Any:
        with warnings.catch_warnings():  # PTB asks for ``Bot.send_message``, which has no receiver
            warnings.simplefilter("ignore")
            return await self.sender.bot.do_api_request("sendMessage", api_kwargs=params)
