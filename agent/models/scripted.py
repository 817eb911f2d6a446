"""A chat model that plays turns from a file: for demos and end-to-end tests.

``scripted:PATH`` reads a YAML (or JSON) list of turns ``{content, tool_calls}``.
The turn played is the number of AI messages already in the conversation, so the
model keeps no state of its own and a restarted process continues the same script.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import BaseModel, Field

from clarigate.agent.models.conversation import ai_message_count, conversation_call_id, last_human_text
from clarigate.agent.models.local import LocalChatModel

SCRIPT_FINISHED = "(script finished)"
LAST_USER = "{last_user}"
#: The conversations ``calls`` keeps, the latest: a scripted bot that serves for days keeps
#: bounded memory (every message's whole conversation otherwise stays for the process's life).
RECORDED_CALLS = 100


class ScriptedToolCall(BaseModel):
    """One tool call a turn makes."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptedTurn(BaseModel):
    """One AI message of the script."""

    content: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    usage: dict[str, int] | None = None  # {"input_tokens": n, "output_tokens": m}: reported like a provider
    # how long the turn "thinks" before answering, as a real model would: seconds, or
    # [low, high] for a delay drawn per conversation (``turn_delay``)
    delay_seconds: float | tuple[float, float] = 0.0
    # seconds between two streamed pieces (words) of ``content``, when the run streams
    token_delay_seconds: float = Field(0.0, ge=0)


def turn_delay(turn: ScriptedTurn, last_user: str) -> float:
    """The seconds ``turn`` waits before answering ``last_user``: drawn from [low, high] by a
    generator seeded with that text, so whoever sent it can tell how long the model took."""
    if isinstance(turn.delay_seconds, tuple):
        low, high = turn.delay_seconds
        return random.Random(last_user).uniform(low, high)
    return float(turn.delay_seconds)


def load_script(path: str | Path) -> list[ScriptedTurn]:
    """The turns in a YAML or JSON file (JSON is valid YAML); ``ValueError`` if it is not a list."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: a script is a list of turns, got {type(data).__name__}")
    return [ScriptedTurn.model_validate(turn) for turn in data]


def _fill_last_user(value: Any, last_user: str) -> Any:
    """``value`` with ``{last_user}`` replaced in every string inside it."""
    if isinstance(value, str):
        return value.replace(LAST_USER, last_user)
    if isinstance(value, list):
        return [_fill_last_user(v, last_user) for v in value]
    if isinstance(value, dict):
        return {k: _fill_last_user(v, last_user) for k, v in value.items()}
    return value


class ScriptedChatModel(LocalChatModel):
    """Plays ``turns`` in order and records the conversations it was given in ``calls`` (the
    latest ``RECORDED_CALLS``, oldest first)."""

    turns: list[ScriptedTurn] = Field(default_factory=list)
    calls: deque[list[BaseMessage]] = Field(
        default_factory=lambda: deque(maxlen=RECORDED_CALLS), exclude=True
    )

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        """The model for ``scripted:PATH``."""
        return cls(turns=load_script(path))

    @property
    def _llm_type(self) -> str:
        return "clarigate-scripted"

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The AI message for this conversation (no recording)."""
        turn_number = ai_message_count(messages)
        if turn_number >= len(self.turns):
            return AIMessage(content=SCRIPT_FINISHED)
        turn = self.turns[turn_number]
        last_user = last_human_text(messages)
        calls = [
            {
                "name": call.name,
                "args": _fill_last_user(call.args, last_user),
                "id": conversation_call_id(messages, index),
                "type": "tool_call",
            }
            for index, call in enumerate(turn.tool_calls)
        ]
        usage = None
        if turn.usage is not None:
            spent_in, spent_out = turn.usage.get("input_tokens", 0), turn.usage.get("output_tokens", 0)
            usage = {
                "input_tokens": spent_in,
                "output_tokens": spent_out,
                "total_tokens": spent_in + spent_out,
            }
        return AIMessage(
            content=turn.content.replace(LAST_USER, last_user),
            tool_calls=calls,
            usage_metadata=usage,  # type: ignore[arg-type]
            response_metadata={"model_name": "scripted"} if usage else {},
        )

    async def think(self, messages: Sequence[BaseMessage]) -> None:
        """Wait the turn's ``delay_seconds`` before answering, as a remote model does (no CPU used)."""
        turn_number = ai_message_count(messages)
        if turn_number < len(self.turns):
            delay = turn_delay(self.turns[turn_number], last_human_text(messages))
            if delay > 0:
                await asyncio.sleep(delay)

    def token_delay(self, messages: Sequence[BaseMessage]) -> float:
        """The turn's ``token_delay_seconds``: the pause between two streamed pieces."""
        turn_number = ai_message_count(messages)
        return self.turns[turn_number].token_delay_seconds if turn_number < len(self.turns) else 0.0

    def observe(self, messages: list[BaseMessage]) -> None:
        """Record what the model was given (tests read ``calls``)."""
        self.calls.append(list(messages))
