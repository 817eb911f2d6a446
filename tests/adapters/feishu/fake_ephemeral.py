"""The ephemeral-card part of the fake Feishu open API: cards one member of a group alone sees
("发送仅特定人可见的消息卡片", ``POST /open-apis/ephemeral/v1/send``; ``…/delete`` takes one away).

As Feishu documents it: ``chat_id`` a group the bot is in, ``open_id`` the member, ``msg_type``
"interactive", ``card`` the card as an object; the answer carries the card's ``message_id``.
A topic group (话题群, ``chat_mode`` "topic") is refused with 18053 "chat can not be thread" (the
code as clients of the API report it; the reference page lists no table); a chat the bot is not
in, or a one-to-one chat, is refused too (those codes unconfirmed). Nothing of it shows in the
chat's messages (``cards``): the fake keeps these in ``ephemeral``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .card_schema import CardRuleBroken, check_card

if TYPE_CHECKING:
    from .fake_open_api import Call

#: Feishu's answer to an ephemeral card in a topic group.
TOPIC_GROUP_REFUSAL = {"code": 18053, "msg": "chat can not be thread"}


@dataclass
class EphemeralCard:
    """A card shown to one member of a group alone."""

    chat_id: str
    open_id: str
    card: dict[str, Any]


class FakeEphemeral:
    """The ephemeral-card endpoints; mixed into ``FakeOpenApi``, whose state (``chats``,
    ``ephemeral``, ``_ids``) they read and change."""

    chats: dict[str, str]
    ephemeral: dict[str, EphemeralCard]
    _ids: Any

    def _ephemeral(self, call: Call) -> tuple[int, dict[str, Any], dict[str, str]]:
        body = call.body if isinstance(call.body, dict) else {}
        if call.method != "POST":
            return 404, {"code": 404, "msg": "not found"}, {}
        if call.path.endswith("/delete"):
            if self.ephemeral.pop(str(body.get("message_id")), None) is None:
                return 400, {"code": 230001, "msg": "message not found"}, {}  # code unconfirmed
            return 200, {"code": 0, "msg": "ok", "data": {}}, {}
        mode = self.chats.get(str(body.get("chat_id")))
        if mode == "topic":
            return 400, dict(TOPIC_GROUP_REFUSAL), {}
        if mode != "group":
            return 400, {"code": 232006, "msg": "Invalid chat_id."}, {}  # code unconfirmed
        card, open_id = body.get("card"), body.get("open_id")
        if body.get("msg_type") != "interactive" or not isinstance(card, dict) or not open_id:
            return 400, {"code": 9499, "msg": "Bad Request"}, {}
        try:
            check_card(card)
        except (CardRuleBroken, KeyError, TypeError, ValueError) as broken:
            return 400, {"code": 230099, "msg": f"Failed to create card content: {broken!r}"}, {}
        message_id = f"om_e{next(self._ids)}"
        self.ephemeral[message_id] = EphemeralCard(str(body["chat_id"]), str(open_id), card)
        return 200, {"code": 0, "msg": "ok", "data": {"message_id": message_id}}, {}
