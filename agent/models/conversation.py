"""What the demo and scripted models read from the conversation they are given."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.models import Locale
from clarigate.agent.protocol.wire import HUMAN_INPUT_RESPONSE_KEY as HUMAN_INPUT_RESPONSE_KEY


def message_text(message: BaseMessage) -> str:
    """The plain text of a message, whether its content is a string or a list of blocks."""
    if isinstance(message.content, str):
        return message.content
    parts = [
        b if isinstance(b, str) else b.get("text", "") for b in message.content if isinstance(b, str | dict)
    ]
    return "".join(p for p in parts if isinstance(p, str))


def last_human(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    """The most recent human message, if any."""
    return next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def last_human_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the most recent human message ("" when there is none)."""
    human = last_human(messages)
    return message_text(human).strip() if human else ""


def thread_locale(messages: Sequence[BaseMessage]) -> Locale:
    """The language of the person's last message in the thread (English when there is none)."""
    return detect_locale(last_human_text(messages))


def ai_message_count(messages: Sequence[BaseMessage]) -> int:
    """How many AI messages the conversation already holds (the scripted model's turn number)."""
    return sum(isinstance(m, AIMessage) for m in messages)


def system_text(messages: Sequence[BaseMessage]) -> str:
    """The text of every system message, joined."""
    return "\n".join(message_text(m) for m in messages if isinstance(m, SystemMessage))


def conversation_call_id(messages: Sequence[BaseMessage], index: int) -> str:
    """A tool call id that is the same for the same conversation and differs between threads.

    Message ids take part, and the gateway gives every human message a fresh id, so two
    threads that say the same words still get different ids (request ids must not collide).
    """
    digest = hashlib.sha256()
    for m in messages:
        digest.update(json.dumps([m.type, m.id, message_text(m)], ensure_ascii=False).encode())
    digest.update(str(index).encode())
    return f"call_{digest.hexdigest()[:24]}"


def answered_response(messages: Sequence[BaseMessage]) -> dict[str, Any] | None:
    """The structured answer carried by the last human message, if it answers a clarification."""
    from clarigate.agent.protocol.wire import response_from_kwargs

    human = last_human(messages)
    response = response_from_kwargs(human.additional_kwargs) if human else None
    return response.to_payload() if response is not None else None
