"""Verified Feishu events -> the core: messages to ``accept``, card clicks to ``submit_answer``.

Both receive modes (webhook and long connection) hand the decrypted event dict
to ``FeishuReceiver.handle``; it returns the card-callback reply (toast and
updated card) or None for plain events. Everything here is fast: the core only
enqueues, the agent runs later.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agent.protocol import summarize_answer, ui_text
from gateway.messages import AnswerStatus, Conversation, InboundAnswer, InboundMessage, PendingView, Sender
from gateway.metrics import INBOUND_EVENTS
from gateway.port import GatewayPort

from .actions import read_card_action
from .names import NameBook
from .render import CARD_LIMIT_BYTES, card_size, native_card, render_answered

PLATFORM = "feishu"
MESSAGE_EVENT = "im.message.receive_v1"
CARD_ACTION_EVENT = "card.action.trigger"

_LEADING_MENTIONS = re.compile(r"^(\s*@_user_\d+\s*)+")


class MalformedEvent(ValueError):
    """An event that is signed correctly but does not have the shape Feishu documents."""


def _dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedEvent(f"{what} is missing or not an object")
    return value


def message_text(message: dict[str, Any]) -> str:
    """The text a person wrote: text and post messages; mentions as ``@name``, leading ones dropped."""
    try:
        content = json.loads(message.get("content") or "{}")
    except ValueError:
        raise MalformedEvent("message content is not JSON") from None
    if not isinstance(content, dict):
        return ""
    kind = message.get("message_type")
    if kind == "text":
        text = str(content.get("text") or "")
    elif kind == "post":
        text = post_text(content)
    else:
        return ""  # images, files, stickers: nothing for the agent to read
    text = _LEADING_MENTIONS.sub("", text)  # "@bot do this" -> "do this"
    names = {
        str(m["key"]): f"@{m.get('name') or ''}"
        for m in message.get("mentions") or []
        if isinstance(m, dict) and m.get("key")
    }
    for key in sorted(names, key=len, reverse=True):  # "@_user_10" before "@_user_1"
        text = text.replace(key, names[key])
    return text.strip()


def post_text(content: dict[str, Any]) -> str:
    """The plain text of a rich-text (post) message, one line per paragraph."""
    if "content" not in content:  # some clients wrap it by language: {"zh_cn": {...}}
        content = next((v for v in content.values() if isinstance(v, dict)), {})
    lines = [str(content.get("title") or "")]
    for paragraph in content.get("content") or []:
        parts = []
        for node in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(node, dict):
                continue
            if node.get("tag") in ("text", "a", "code_block"):
                parts.append(str(node.get("text") or ""))
            elif node.get("tag") == "at":  # "@_user_1" keys are resolved with the mentions, like in text
                key = str(node.get("user_id") or "")
                parts.append(key if key.startswith("@_") else f"@{node.get('user_name') or key}")
        lines.append("".join(parts))
    return "\n".join(line for line in lines if line)


def parse_message(payload: dict[str, Any], bot_open_id: str | None = None) -> InboundMessage | None:
    """An ``im.message.receive_v1`` event as an ``InboundMessage`` (None for bots' messages).

    Topic: None in a p2p chat; in a group, the thread's root message (a top-level
    mention is the root of the thread the bot's reply starts).
    """
    header = _dict(payload.get("header"), "header")
    event = _dict(payload.get("event"), "event")
    message = _dict(event.get("message"), "event.message")
    sender = _dict(event.get("sender"), "event.sender")
    if sender.get("sender_type", "user") != "user":
        return None
    sender_ids = _dict(sender.get("sender_id"), "event.sender.sender_id")
    chat_id, message_id = message.get("chat_id"), message.get("message_id")
    if not (chat_id and message_id and sender_ids.get("open_id") and header.get("event_id")):
        raise MalformedEvent("message event without chat, message, sender or event id")
    is_direct = message.get("chat_type") == "p2p"
    root = message.get("root_id") or message_id
    mentions = [m for m in message.get("mentions") or [] if isinstance(m, dict)]
    if bot_open_id:
        mentioned = any((m.get("id") or {}).get("open_id") == bot_open_id for m in mentions)
    else:  # without the bot's id, any mention counts: groups only deliver mentions by default
        mentioned = bool(mentions)
    return InboundMessage(
        conversation=Conversation(
            platform=PLATFORM,
            workspace=str(header.get("tenant_key") or sender.get("tenant_key") or ""),
            chat_id=str(chat_id),
            topic=None if is_direct else str(root),
            is_direct=is_direct,
            reply_to=None if is_direct else str(root),
        ),
        sender=Sender(user_id=str(sender_ids["open_id"])),
        text=message_text(message),
        event_id=str(header["event_id"]),
        message_id=str(message_id),
        is_mention=is_direct or mentioned,
    )


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


class FeishuReceiver:
    """Routes verified events to the core; shared by the webhook and the long connection."""

    def __init__(self, gateway: GatewayPort, names: NameBook | None = None) -> None:
        self.gateway = gateway
        self.names = names  # people's names for open_ids, when the app may read them
        self.bot_open_id: str | None = None  # learnt at start; tells mentions of the bot apart

    async def person(self, open_id: str) -> Sender:
        """The sender behind ``open_id``, named when Feishu tells the name."""
        name = await self.names.name(open_id) if self.names is not None else None
        return Sender(user_id=open_id, display_name=name)

    async def handle(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one event; returns the reply for a card callback, None otherwise."""
        header = _dict(payload.get("header"), "header")
        event_type = header.get("event_type")
        if event_type == MESSAGE_EVENT:
            await self.on_message(payload)
            return None
        if event_type == CARD_ACTION_EVENT:
            return await self.on_card_action(header, _dict(payload.get("event"), "event"))
        INBOUND_EVENTS.labels(PLATFORM, "other").inc()
        return None

    async def on_message(self, payload: dict[str, Any]) -> None:
        """Hand a person's message to the core (dedupe, allowlist and typed answers are its job)."""
        message = parse_message(payload, self.bot_open_id)
        if message is None or not message.text:
            return
        conversation = message.conversation
        if not (
            message.is_mention
            or conversation.is_direct
            or await self.gateway.knows_conversation(conversation)
        ):
            return  # group chatter the bot is not part of (seen when the app may read all group messages)
        sender = await self.person(message.sender.user_id)
        await self.gateway.accept(message.model_copy(update={"sender": sender}))

    async def on_card_action(self, header: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
        """Answer a click or form submit: toast, and the updated card when the answer counted."""
        action = _dict(event.get("action"), "event.action")
        value = action.get("value")
        token = value.get("t") if isinstance(value, dict) else None
        view = await self.gateway.pending_by_token(str(token)) if token else None
        if view is None:
            return toast(ui_text("expired"), "warning")
        operator = _dict(event.get("operator"), "event.operator")
        if not operator.get("open_id"):
            raise MalformedEvent("card action without operator.open_id")
        sender = await self.person(str(operator["open_id"]))
        read = read_card_action(view.request, checked_action(action))
        if read.opens_other:
            return await self.open_other(view, sender)
        if read.problems:
            return toast("; ".join(read.problems), "error")
        outcome = await self.gateway.submit_answer(
            InboundAnswer(
                sender=sender,
                event_id=interaction_id(header, event),
                token=view.token,
                option_id=read.option_id,
                text=read.text,
                values=read.values,
            )
        )
        if outcome.accepted:
            done = toast(ui_text("answer_received", view.request.locale), "success")
            return with_card(done, render_answered(view.request, outcome.answered_line, sender.user_id))
        if outcome.status is AnswerStatus.DUPLICATE:
            return repeat_reply(outcome.view or view)
        if outcome.status is AnswerStatus.INVALID:
            return toast(invalid_message(view, outcome.message, outcome.errors), "error")
        return toast(outcome.message or ui_text("expired", view.request.locale), "warning")

    async def open_other(self, view: PendingView, sender: Sender) -> dict[str, Any]:
        """Show the "Other…" input to whoever may answer; others get the refusal."""
        refusal = await self.gateway.may_answer(view, sender)
        if refusal is not None:
            return toast(refusal.message, "warning")
        card = native_card(view.request, view.token, other_open=True)
        if card_size(card) > CARD_LIMIT_BYTES:
            return toast(ui_text("type_answer", view.request.locale))
        return with_card({}, card)


#: What Feishu puts in ``event.action`` besides ``value``, by type (absent or null is fine too).
_ACTION_SHAPES: dict[str, type] = {"form_value": dict, "option": str, "input_value": str, "options": list}


def checked_action(action: dict[str, Any]) -> dict[str, Any]:
    """``action`` when its fields have the types Feishu documents; MalformedEvent otherwise."""
    for key, kind in _ACTION_SHAPES.items():
        if action.get(key) is not None and not isinstance(action[key], kind):
            raise MalformedEvent(f"event.action.{key} is not a {kind.__name__}")
    return action


def repeat_reply(view: PendingView) -> dict[str, Any]:
    """The reply to a callback Feishu delivered again: the answered card once more, if it was answered.

    Feishu redelivers when our first reply was slow or lost, so the card may never
    have changed; other repeats change nothing.
    """
    if view.status != "answered" or view.response is None:
        return {}
    who = view.answered_by.label if view.answered_by else ""
    line = ui_text(
        "answered_by", view.request.locale, who=who, answer=summarize_answer(view.request, view.response)
    )
    done = toast(ui_text("answer_received", view.request.locale), "success")
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
