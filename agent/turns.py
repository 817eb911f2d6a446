"""Which of a thread's messages are one turn's output: its replies and the question it asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from clarigate.agent.harness import TurnOutput
    from clarigate.agent.protocol import HumanInputRequest


def turn_output(
    messages: Sequence[BaseMessage], human_id: str | None, start: int | None = None
) -> TurnOutput:
    """The replies and the request among the messages of this turn.

    The turn starts after the message ``human_id`` (a new message) or at index ``start``
    (a resumed run: everything after what the thread held before).
    """
    from langchain_core.messages import AIMessage

    from clarigate.agent.harness import TurnOutput
    from clarigate.agent.limits import LIMIT_KEY
    from clarigate.agent.middleware import request_in
    from clarigate.agent.models.conversation import message_text
    from clarigate.agent.protocol import render_text_fallback

    if start is None:
        found = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == human_id), -1)
        start = found + 1
    replies: list[str] = []
    request: HumanInputRequest | None = None
    fallback: str | None = None
    limit: str | None = None
    for message in messages[start:]:
        if isinstance(message, AIMessage) and not message.tool_calls:
            text = message_text(message).strip()
            if text:
                replies.append(text)
            limit = message.additional_kwargs.get(LIMIT_KEY) or limit
        elif (asked := request_in(message)) is not None:
            request, fallback = asked, render_text_fallback(asked)  # content may hold a note for the model
    return TurnOutput(replies=replies, request=request, fallback_text=fallback, limit=limit)
