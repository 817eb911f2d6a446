"""An empty model answer asked for once more: a final message with no text, no tool call and no
file (providers send one now and then, a 200 with ``"content": ""``) would end the run with
nothing for the person, who would read "Done: nothing to report.". Only an answer to the
person's message itself is asked for again: after a tool ran in the turn, an empty last word is
the model's way to say it is done (the tool's files, if any, are what the person gets).

``RequireAnswerMiddleware`` raises ``EmptyModelAnswer`` (a retryable ``ModelError``) for such an
answer; LangChain's ``ModelRetryMiddleware`` around it calls the model once more and, when that
answer is empty too, lets the error end the run, which ``gateway/flow/model_failures.py`` logs
on one line and tells the person in words of their own (``model_answer_empty``). An answer the
provider withheld (``finish_reason`` "content_filter") is not retried: its own words say so
(``turn_output``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse, ModelRetryMiddleware
from langchain_core.exceptions import ModelError
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

#: ``EmptyModelAnswer.code``, which ``model_failures`` knows the answer by.
EMPTY_ANSWER = "empty_answer"
#: Tries after the first for an empty answer: one (a second empty answer is the model's way).
EMPTY_ANSWER_RETRIES = 1
#: Content blocks that show the person nothing: an answer made only of them is empty.
_UNSEEN_BLOCKS = frozenset({"text", "reasoning", "thinking", "redacted_thinking"})


class EmptyModelAnswer(ModelError):
    """The model's final answer held nothing to show (no text, tool call or file)."""

    is_retryable = True
    code = EMPTY_ANSWER

    def __init__(self, provider: str) -> None:
        self.provider = provider
        super().__init__(f"{provider} answered with an empty message")


def _is_empty(message: AIMessage) -> bool:
    """True when ``message`` calls no tool and shows nothing: empty text, only reasoning."""
    from clarigate.agent.invalid_calls import stop_reason
    from clarigate.agent.models.conversation import message_text

    if message.tool_calls or message.invalid_tool_calls or message_text(message).strip():
        return False
    if stop_reason(message) == "content_filter":  # withheld: said as such (``turn_output``)
        return False
    blocks = message.content if isinstance(message.content, list) else []
    return all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") in _UNSEEN_BLOCKS) for b in blocks
    )


def _tool_ran(request: ModelRequest) -> bool:
    """Whether a tool ran since the person's last message (the turn so far)."""
    for message in reversed(request.messages):
        if isinstance(message, ToolMessage):
            return True
        if isinstance(message, HumanMessage):
            return False
    return False


def _checked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    last = response.result[-1] if response.result and not _tool_ran(request) else None
    if isinstance(last, AIMessage) and response.structured_response is None and _is_empty(last):
        provider = last.response_metadata.get("model_provider")
        raise EmptyModelAnswer(provider if isinstance(provider, str) and provider else "model")
    return response


class RequireAnswerMiddleware(AgentMiddleware):
    """Raises ``EmptyModelAnswer`` for an empty final answer (``ModelRetryMiddleware`` retries it)."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Call the model; an empty answer raises."""
        return _checked(request, handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async twin of ``wrap_model_call``."""
        return _checked(request, await handler(request))


def empty_answer_retry() -> list[AgentMiddleware[Any, Any, Any]]:
    """The middleware that asks once more for an empty answer, outermost first: list them last,
    so they are nearest the model (a ``wrap_model_call`` listed first wraps the others)."""
    retry = ModelRetryMiddleware(
        max_retries=EMPTY_ANSWER_RETRIES,
        retry_on=(EmptyModelAnswer,),
        on_failure="error",
        initial_delay=0.0,
        jitter=False,
    )
    return [retry, RequireAnswerMiddleware()]
