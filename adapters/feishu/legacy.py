"""Older formats on the events URL, read like the new ones: old-style card callbacks
(``card.action.trigger_v1``, answered the old way) and schema 1.0 message events.

The old callback's answer is either the new card's JSON (it replaces the card) or a toast,
never both. When the reply to a click has both (an answer accepted: "Answer received" and the
answered card), the card is replaced through the open API first and the toast is the answer,
so the clicker still sees it; if Feishu refuses that update, or has not answered within
``UPDATE_WAIT_SECONDS`` (the callback must be answered within 3 s), the card JSON is the answer
(the card changes, the toast is lost, as before).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from .card_updates import CardUpdates, say_if_failed
from .content import MalformedEvent
from .open_api import FeishuApiError

log = logging.getLogger(__name__)

MESSAGE_EVENT = "im.message.receive_v1"

_AT_TAG = re.compile(r"<at [^>]*>([^<]*)</at>")

#: How long a callback waits for the open API to replace the clicked card (Feishu wants the answer
#: within 3 s; the API's own timeout is 10 s): then the card JSON is the answer instead.
UPDATE_WAIT_SECONDS = 1.5


def is_legacy_card_callback(payload: dict[str, Any]) -> bool:
    """True for an old-style card callback (``card.action.trigger_v1``): no envelope, flat fields.

    ``{"open_id", "user_id", "open_message_id", "open_chat_id", "tenant_key", "token", "action"}``,
    where ``token`` is the card's update token, not the verification token.
    """
    return (
        "header" not in payload and "open_message_id" in payload and isinstance(payload.get("action"), dict)
    )


def legacy_card_event(payload: dict[str, Any]) -> dict[str, Any]:
    """An old-style card callback in the shape of a ``card.action.trigger`` event."""
    if not payload.get("open_id"):
        raise MalformedEvent("card callback without open_id")
    return {
        "operator": {"open_id": payload["open_id"], "tenant_key": payload.get("tenant_key")},
        "action": payload["action"],
        "context": {
            "open_message_id": payload["open_message_id"],
            "open_chat_id": payload.get("open_chat_id"),
        },
        "token": payload.get("token"),
    }


async def legacy_reply(
    reply: dict[str, Any], message_id: str, cards: CardUpdates, wait: float = UPDATE_WAIT_SECONDS
) -> dict[str, Any]:
    """A callback reply the old way: the toast (the card replaced through the API meanwhile), or
    the new card's JSON itself when there is no toast or the API would not replace it (or had not
    within ``wait``, at most ``UPDATE_WAIT_SECONDS``: the update goes on, with the same card)."""
    toast = {k: v for k, v in reply.items() if k == "toast"}
    card = reply.get("card")
    if not (isinstance(card, dict) and isinstance(card.get("data"), dict)):
        return toast
    if toast and cards.update_card is not None and message_id:
        update = cards.replace(message_id, card["data"])  # after the card's update under way, if any
        done, _ = await asyncio.wait({update}, timeout=max(min(wait, UPDATE_WAIT_SECONDS), 0))
        if not done:  # the same card either way: Feishu applies the answer, the update lands later
            log.warning("feishu: the open API is slow to replace the clicked card: answering with it")
            update.add_done_callback(say_if_failed)
        else:
            try:
                update.result()
                return toast
            except FeishuApiError as exc:
                log.warning("feishu: could not replace the clicked card (%s): answering with it", exc.code)
    return dict(card["data"])


def schema_one_message(payload: dict[str, Any]) -> dict[str, Any] | None:
    """A schema 1.0 ``message`` event in the shape of ``im.message.receive_v1``; None for other events.

    1.0 carries the text with the bot's mention already taken out (``text_without_at_bot``),
    the ids under other names (``open_message_id``, ``open_chat_id``, ``open_id``) and the
    time in the envelope's ``ts`` (seconds).
    """
    event = payload["event"]
    if event.get("type") != "message" or not event.get("open_message_id"):
        return None
    kind = str(event.get("msg_type") or "text")
    if kind in ("text", "post"):
        text = str(event.get("text_without_at_bot") or event.get("text") or "")
        kind, content = "text", {"text": _AT_TAG.sub(r"\1", text)}  # <at open_id="ou_1">@Bob</at> -> @Bob
    else:  # image_key, file_key, file_name sit beside the other fields
        content = {k: event[k] for k in ("image_key", "file_key", "file_name") if event.get(k)}
    try:
        created = str(int(float(str(payload.get("ts"))) * 1000))
    except ValueError:
        created = ""
    return {
        "schema": "2.0",
        "header": {
            "event_id": payload.get("uuid"),
            "event_type": MESSAGE_EVENT,
            "tenant_key": event.get("tenant_key"),
        },
        "event": {
            "sender": {"sender_id": {"open_id": event.get("open_id")}, "sender_type": "user"},
            "message": {
                "message_id": event["open_message_id"],
                "root_id": event.get("root_id") or None,
                "chat_id": event.get("open_chat_id"),
                "chat_type": "p2p" if event.get("chat_type") == "private" else "group",
                "message_type": kind,
                "content": json.dumps(content),
                "create_time": created,
            },
        },
    }
