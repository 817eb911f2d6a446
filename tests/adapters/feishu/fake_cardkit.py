"""The CardKit part of the fake Feishu open API: card entities (create, stream an element's text,
settings, full update, add elements), answering as CardKit's reference pages document.

``sequence`` must be an int32 that grows strictly per card (300317), text streams only while
``streaming_mode`` is on (300309, or 200850 once the mode timed out), an unknown card is 200740,
a card over 30 KB 200860, an exclusive card (``update_multi`` false) 300302. The
element-not-found answer (300313 "Failed to update element properties", with the element named in
``msg``) and the answer to sending an entity twice are unconfirmed: the docs list the codes but
not the cases. "Add elements" (``POST …/cards/:card_id/elements``, ``type`` ``append`` /
``insert_before`` / ``insert_after``, ``elements`` a JSON array as a string) keeps the card within
the JSON 2.0 rules, and a repeated ``uuid`` adds nothing more (the API's idempotency key).
``refuse_cardkit`` makes every CardKit call answer as Feishu does for an app without the
``cardkit:card:write`` scope.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .card_schema import CardRuleBroken, check_card

if TYPE_CHECKING:
    from .fake_open_api import Call

#: Feishu: "卡片及富文本消息请求体最大不能超过30KB".
CARD_BODY_LIMIT = 30 * 1024
INT32_MAX = 2**31 - 1
#: The answer of an app without the cardkit:card:write scope (the common "access denied").
CARDKIT_SCOPE_MISSING = {
    "code": 99991672,
    "msg": "Access denied. One of the following scopes is required: [cardkit:card:write].",
}


@dataclass
class Entity:
    """A CardKit card entity: its card JSON now, its streaming state and last sequence."""

    card: dict[str, Any]
    streaming: str = "off"  # "on", "off" (closed by settings or a full update), "timeout"
    sequence: int = 0
    message_id: str | None = None  # the message showing it (an entity is sent once)
    uuids: set[str] = field(default_factory=set)  # "add elements" calls applied, by their uuid


class FakeCardKit:
    """CardKit's answers; mixed into ``FakeOpenApi``, whose state (``entities``, ``cards``,
    ``calls``, ``refuse_cardkit``, ``_ids``) they read and change."""

    entities: dict[str, Entity]
    cards: dict[str, dict[str, Any]]
    calls: list[Any]
    refuse_cardkit: bool
    _ids: Any

    def cardkit_calls(self, kind: str | None = None) -> list[Call]:
        """CardKit calls, oldest first; ``kind``: "create", "content", "settings" or "update"."""
        found = [c for c in self.calls if c.path.startswith("/open-apis/cardkit/v1/cards")]
        if kind is None:
            return found
        return [c for c in found if cardkit_kind(c) == kind]

    def time_out_streaming(self, card_id: str) -> None:
        """Close a card's streaming mode as Feishu does on its own after a while (200850 then)."""
        self.entities[card_id].streaming = "timeout"

    # --- CardKit ---------------------------------------------------------------------------------

    def _cardkit(self, call: Call) -> tuple[int, dict[str, Any], dict[str, str]]:
        if self.refuse_cardkit:
            return 400, dict(CARDKIT_SCOPE_MISSING), {}
        kind = cardkit_kind(call)
        body = call.body if isinstance(call.body, dict) else {}
        if kind == "create":
            return self._create_entity(body)
        card_id = call.path.split("/")[5]
        entity = self.entities.get(card_id)
        if entity is None:
            return 400, {"code": 200740, "msg": "The card entity does not exist"}, {}
        sequence = body.get("sequence")
        if not isinstance(sequence, int) or isinstance(sequence, bool) or not 1 <= sequence <= INT32_MAX:
            return 400, {"code": 10002, "msg": "invalid sequence: a positive int32 is required"}, {}
        if sequence <= entity.sequence:
            msg = "The sequence number for operating on the card did not increment consecutively"
            return 400, {"code": 300317, "msg": f"{msg} (last {entity.sequence}, got {sequence})"}, {}
        if kind == "content":
            answer = self._stream_text(entity, call.path.split("/")[7], body)
        elif kind == "settings":
            answer = self._settings(entity, body)
        elif kind == "update":
            answer = self._full_update(entity, body)
        elif kind == "elements":
            answer = self._add_elements(entity, body)
        else:
            return 404, {"code": 404, "msg": "not found"}, {}
        if answer[0] == 200:
            entity.sequence = sequence
            if entity.message_id is not None and entity.message_id in self.cards:
                self.cards[entity.message_id] = copy.deepcopy(entity.card)
        return answer

    def _create_entity(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``POST /open-apis/cardkit/v1/cards`` ``{"type": "card_json", "data": "<card JSON>"}``."""
        if body.get("type") != "card_json" or not isinstance(body.get("data"), str):
            return 400, {"code": 10002, "msg": "type must be card_json and data a string"}, {}
        card, refusal = self._card_from(body["data"])
        if refusal is not None:
            return 400, refusal, {}
        card_id = str(7355372766134157000 + next(self._ids))
        streaming = card.get("config", {}).get("streaming_mode") is True
        self.entities[card_id] = Entity(card, "on" if streaming else "off")
        return 200, {"code": 0, "msg": "success", "data": {"card_id": card_id}}, {}

    def _card_from(self, data: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        if len(data.encode()) > CARD_BODY_LIMIT:
            return {}, {"code": 200860, "msg": "Card content exceeds limit."}
        try:
            card = json.loads(data)
            check_card(card)
        except (CardRuleBroken, KeyError, TypeError, ValueError) as broken:
            return {}, {"code": 200220, "msg": f"Failed to generate card content: {broken!r}"}
        if card.get("config", {}).get("update_multi") is False:
            return {}, {"code": 300302, "msg": "update_multi property is false"}
        return card, None

    def _stream_text(
        self, entity: Entity, element_id: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``PUT …/cards/:card_id/elements/:element_id/content`` ``{"content", "sequence", "uuid"?}``."""
        if entity.streaming == "timeout":
            return 400, {"code": 200850, "msg": "Card streaming timeout"}, {}
        if entity.streaming != "on":
            return 400, {"code": 300309, "msg": "Card streaming closed"}, {}
        content = body.get("content")
        if not isinstance(content, str) or not 1 <= len(content) <= 100_000:
            return 400, {"code": 10002, "msg": "content must be 1 to 100000 characters"}, {}
        element = next((e for e in _components(entity.card) if e.get("element_id") == element_id), None)
        if element is None:
            return (
                400,
                {
                    "code": 300313,
                    "msg": f"Failed to update element properties: not find elementID {element_id}",
                },
                {},
            )
        if element.get("tag") not in ("markdown", "plain_text"):
            return 400, {"code": 300310, "msg": "Only update text"}, {}
        element["content"] = content
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _settings(self, entity: Entity, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``PATCH …/cards/:card_id/settings`` ``{"settings": "{\"config\": {…}}", "sequence"}``."""
        try:
            settings = json.loads(body["settings"])
            config = settings.get("config", {})
            assert isinstance(config, dict) and set(settings) <= {"config", "card_link"}
        except (AssertionError, KeyError, TypeError, ValueError):
            return 400, {"code": 10002, "msg": "settings must be a JSON string with config"}, {}
        if config.get("update_multi") is False:
            return 400, {"code": 300302, "msg": "update_multi property is false"}, {}
        entity.card.setdefault("config", {}).update(config)
        if "streaming_mode" in config:
            entity.streaming = "on" if config["streaming_mode"] is True else "off"
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _full_update(
        self, entity: Entity, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``PUT …/cards/:card_id`` ``{"card": {"type": "card_json", "data": "<card JSON>"}, "sequence"}``."""
        card_body = body.get("card")
        if not isinstance(card_body, dict) or card_body.get("type") != "card_json":
            return 400, {"code": 10002, "msg": "card.type must be card_json"}, {}
        card, refusal = self._card_from(str(card_body.get("data") or ""))
        if refusal is not None:
            return 400, refusal, {}
        entity.card = card
        entity.streaming = "on" if card.get("config", {}).get("streaming_mode") is True else "off"
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _add_elements(
        self, entity: Entity, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``POST …/cards/:card_id/elements`` ``{"type", "target_element_id"?, "uuid"?, "sequence",
        "elements": "<JSON array>"}``: the components added where ``type`` says, the card kept
        within the JSON 2.0 rules; a ``uuid`` seen before adds nothing more."""
        try:
            added = json.loads(body["elements"])
            assert isinstance(added, list) and added and all(isinstance(e, dict) for e in added)
        except (AssertionError, KeyError, TypeError, ValueError):
            return 400, {"code": 10002, "msg": "elements must be a JSON array of components as a string"}, {}
        if body.get("uuid") and body["uuid"] in entity.uuids:
            return 200, {"code": 0, "msg": "success", "data": {}}, {}
        elements = entity.card.setdefault("body", {}).setdefault("elements", [])
        kind, target = body.get("type"), body.get("target_element_id")
        if kind == "append":
            at = len(elements)
        elif kind in ("insert_before", "insert_after"):
            found = [i for i, e in enumerate(elements) if e.get("element_id") == target]
            if not found:
                msg = f"Failed to update element properties: not find elementID {target}"
                return 400, {"code": 300313, "msg": msg}, {}
            at = found[0] + (kind == "insert_after")
        else:
            return 400, {"code": 10002, "msg": "type must be append, insert_before or insert_after"}, {}
        card = copy.deepcopy(entity.card)
        card["body"]["elements"][at:at] = added
        _, refusal = self._card_from(json.dumps(card))
        if refusal is not None:
            return 400, refusal, {}
        entity.card = card
        if body.get("uuid"):
            entity.uuids.add(body["uuid"])
        return 200, {"code": 0, "msg": "success", "data": {}}, {}


def cardkit_kind(call: Call) -> str:
    """What a CardKit call does: "create", "content", "settings", "update", "elements" (added;
    or "other")."""
    parts = call.path.split("/")  # "", "open-apis", "cardkit", "v1", "cards", card_id, …
    if len(parts) == 5 and call.method == "POST":
        return "create"
    if len(parts) == 6 and call.method == "PUT":
        return "update"
    if len(parts) == 7 and parts[6] == "settings" and call.method == "PATCH":
        return "settings"
    if len(parts) == 9 and parts[6] == "elements" and parts[8] == "content" and call.method == "PUT":
        return "content"
    if len(parts) == 7 and parts[6] == "elements" and call.method == "POST":
        return "elements"
    return "other"


def _components(card: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "tag" in node:
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(card.get("body", {}))
    return found
