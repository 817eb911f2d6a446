"""The base of the models that run in this process with no provider: offline demo, scripted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Self

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class LocalChatModel(BaseChatModel):
    """A chat model that decides from the conversation alone; subclasses write ``reply_to``."""

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The AI message for this conversation."""
        raise NotImplementedError

    def observe(self, messages: list[BaseMessage]) -> None:
        """Called with every conversation the model is given (recording models keep it)."""

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
        # No I/O: skip the default thread hand-off.
        return self._generate(messages, stop, **kwargs)
