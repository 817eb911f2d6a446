"""The replies to Feishu card callbacks: toasts, the card that replaces the clicked one, and the
checks on what a callback carries (``receive.FeishuReceiver.on_card_action`` answers with them)."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from clarigate.agent.protocol import closed_line, ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import PendingView

from .content import MalformedEvent
from .render import render_answered

log = logging.getLogger(__name__)

#: What Feishu puts in ``event.action`` besides ``value``, by type (absent or null is fine too).
_ACTION_SHAPES: dict[str, type] = {"form_value": dict, "option": str, "input_value": str, "options": list}


def toast(text: str, kind: str = "info") -> dict[str, Any]:
    """A callback reply showing ``text`` to the person who clicked; the card stays as it is."""
    return {"toast": {"type": kind, "content": text}}


def with_card(reply: dict[str, Any], card: dict[str, Any]) -> dict[str, Any]:
    """A callback reply that also replaces the card for everyone."""
    return {**reply, "card": {"type": "raw", "data": card}}


def interaction_id(header: dict[str, Any], event: dict[str, Any]) -> str:
    """The dedupe id of a click: Feishu's event id, else a digest of what was clicked."""
    if header.get("event_id"):
        return str(header["event_id"])
    return hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest()[:32]


def checked_action(action: dict[str, Any]) -> dict[str, Any]:
    """``action`` when its fields have the types Feishu documents; MalformedEvent otherwise."""
    for key, kind in _ACTION_SHAPES.items():
        if action.get(key) is not None and not isinstance(action[key], kind):
            raise MalformedEvent(f"event.action.{key} is not a {kind.__name__}")
    return action


def operator_open_id(event: dict[str, Any]) -> str | None:
    """Who clicked (``event.operator.open_id``); None when the operator names them only by other
    ids (``union_id``, ``user_id``); MalformedEvent when there is no operator object at all."""
    operator = event.get("operator")
    if not isinstance(operator, dict):
        raise MalformedEvent("event.operator is missing or not an object")
    open_id = operator.get("open_id")
    return str(open_id) if open_id else None


def unattributed(event: dict[str, Any]) -> dict[str, Any]:
    """The reply to a click nobody can be named for (no ``operator.open_id``, although Feishu
    documents it as always there): a warning toast in the card's language, and a log line."""
    value = event["action"].get("value")  # the action was read already: it is an object
    language: Locale = "zh" if isinstance(value, dict) and value.get("l") == "zh" else "en"
    operator = event.get("operator") or {}
    log.warning(
        "feishu: a card action without operator.open_id (it has %s): not answered",
        sorted(k for k, v in operator.items() if v) or "no ids",
    )
    return toast(ui_text("click_unattributed", language), "warning")


def repeat_reply(view: PendingView) -> dict[str, Any]:
    """The reply to a callback Feishu delivered again: the closed card once more, if it was closed.

    Feishu redelivers when our first reply was slow or lost, so the card may never have changed:
    an answer gets the answered card and "received" again, a Cancel the closed card and the closed
    line ("✖ Cancelled by …") again, as the first reply had them; other repeats change nothing.
    """
    if view.status != "answered" or view.response is None:
        return {}
    who = view.answered_by.label if view.answered_by else ""
    line = closed_line(view.request, view.response, who)
    declined = view.response.response_kind == "declined"
    done = toast(line if declined else ui_text("answer_received", view.request.locale), "success")
    return with_card(
        done, render_answered(view.request, line, view.answered_by.user_id if view.answered_by else None)
    )


def invalid_message(view: PendingView, message: str, errors: dict[str, str]) -> str:
    """One toast line naming each field that needs fixing and why."""
    parts = []
    for name, problem in errors.items():
        f = view.request.field_by_name(name)
        parts.append(f"{f.label if f else name}: {problem}")
    head = message or ui_text("invalid_values", view.request.locale)
    return f"{head} {'; '.join(parts)}".strip()
