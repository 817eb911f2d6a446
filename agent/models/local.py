"""The base of the models that run in this process with no provider: offline demo, scripted."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Self

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

#: A streamed piece: a word with the spaces before it, or one CJK character (as tokenizers cut).
_PIECE = re.compile(r"\s*[\u3000-\u9fff\uff00-\uffef]|\s*[^\s\u3000-\u9fff\uff00-\uffef]+|\s+$")


def stream_pieces(text: str) -> list[str]:
    """``text`` cut into the pieces a model would stream (they add up to ``text``)."""
    pieces = _PIECE.findall(text)
    return pieces if "".join(pieces) == text else [text]


class LocalChatModel(BaseChatModel):
    """A chat model that decides from the conversation alone; subclasses write ``reply_to``.

    It streams too (``astream``, and LangGraph's ``messages`` mode): the reply's text piece by
    piece, ``token_delay`` seconds apart, then the tool calls and usage in the last chunk.
    """

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The AI message for this conversation."""
        raise NotImplementedError

    def observe(self, messages: list[BaseMessage]) -> None:
        """Called with every conversation the model is given (recording models keep it)."""

    async def think(self, messages: Sequence[BaseMessage]) -> None:
        """Wait as the model would before its first token (none here: subclasses may)."""

    def token_delay(self, messages: Sequence[BaseMessage]) -> float:
        """Seconds between two streamed pieces of the reply to ``messages`` (0: all at once)."""
        return 0.0

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Self:  # type: ignore[override]
        """The model decides from the conversation, so binding tools changes nothing."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.observe(messages)
        return ChatResult(generations=[ChatGeneration(message=self.reply_to(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        await self.think(messages)
        # No I/O: skip the default thread hand-off.
        return self._generate(messages, stop, **kwargs)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        await self.think(messages)
        self.observe(messages)
        message = self.reply_to(messages)
        delay = self.token_delay(messages)
        text = message.content if isinstance(message.content, str) else ""
        pieces = stream_pieces(text) if text else []
        for index, piece in enumerate(pieces):
            if index and delay > 0:
                await asyncio.sleep(delay)  # as a remote model does: waiting, not using the CPU
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message.id))
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
        # the rest of the message in its last chunk: tool calls, usage, metadata (content that
        # is not a plain string goes here whole)
        rest = AIMessageChunk(
            content="" if pieces or isinstance(message.content, str) else message.content,
            id=message.id,
            tool_calls=message.tool_calls,
            invalid_tool_calls=message.invalid_tool_calls,
            usage_metadata=message.usage_metadata,
            response_metadata=message.response_metadata,
            additional_kwargs=message.additional_kwargs,
            chunk_position="last",
        )
        yield ChatGenerationChunk(message=rest)
