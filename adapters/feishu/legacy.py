"""Old-style card callbacks (``card.action.trigger_v1``): read like new ones, answered the old way.

The old callback's answer is either the new card's JSON (it replaces the card) or a toast,
never both. When the reply to a click has both (an answer accepted: "Answer received" and the
answered card), the card is replaced through the open API first and the toast is the answer,
so the clicker still sees it; if Feishu refuses that update, or has not answered within
``UPDATE_WAIT_SECONDS`` (the callback must be answered within 3 s), the card JSON is the answer
(the card changes, the toast is lost, as before).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .card_updates import CardUpdates, say_if_failed
from .content import MalformedEvent
from .open_api import FeishuApiError

log = logging.getLogger(__name__)

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
