"""The clarify-first phase (Open Deep Research style), switched on by ``allow_clarification``.

Before the agent acts on a new request, one structured-output call decides whether
to ask (``need_clarification``, ``question``, ``verification``), with retries. A
question reaches the person as the same ``human_input`` request (free text) the
tool produces, so every platform renders it alike; otherwise the verification is
one of the turn's replies and the agent goes on. The check is skipped while the
person answers the agent's own questions, and after ``max_asks`` questions in a
thread it no longer asks; before that, the prompt says a second question must be
absolutely necessary.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, hook_config
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from clarigate.agent.history import with_every_call_answered
from clarigate.agent.middleware import clarification_tool_message, request_in
from clarigate.agent.models.conversation import answered_response
from clarigate.agent.models.local import LocalChatModel
from clarigate.agent.prompts import ALREADY_ASKED_NOTE, CLARIFY_FIRST_PROMPT
from clarigate.agent.protocol import normalize_request
from clarigate.agent.tools import ASK_CLARIFICATION

log = logging.getLogger(__name__)

#: Tool call ids of clarify-first questions start with this, so the phase can count its own.
CLARIFY_FIRST_CALL_PREFIX = "clarify-first-"
#: Marks the verification message (an ordinary AI message the models see, like in Open Deep Research).
VERIFICATION_KEY = "clarify_first_verification"


class ClarifyWithUser(BaseModel):
    """Whether to ask the person a clarifying question before starting the work."""

    need_clarification: bool = Field(description="True only if a question is truly needed before starting.")
    question: str = Field(default="", description="The question to ask, when one is needed.")
    verification: str = Field(default="", description="When no question is needed: what you understood.")


def is_verification(message: BaseMessage) -> bool:
    """True for the clarify-first verification message."""
    return isinstance(message, AIMessage) and bool(message.additional_kwargs.get(VERIFICATION_KEY))


def _is_agent_work(message: BaseMessage) -> bool:
    """True for a message that shows the request is under way: a verification, or any AI
    message that is not one of the check's own questions."""
    if not isinstance(message, AIMessage):
        return False
    if is_verification(message):
        return True
    own = message.tool_calls and all(
        (c["id"] or "").startswith(CLARIFY_FIRST_CALL_PREFIX) for c in message.tool_calls
    )
    return not own


class ClarifyFirstMiddleware(AgentMiddleware):
    """Runs the clarify-first check before the agent acts on a new request."""

    def __init__(self, model: BaseChatModel, *, retries: int = 3, max_asks: int = 2) -> None:
        """``retries``: structured-output attempts; ``max_asks``: questions per thread at most."""
        super().__init__()
        self.structured = model.with_structured_output(ClarifyWithUser)
        self.retries = retries
        self.max_asks = max_asks
        self.to_provider = not isinstance(model, LocalChatModel)

    def _check_input(self, messages: Sequence[AnyMessage]) -> list[BaseMessage] | None:
        """What the check is given, or None when it must not run on this turn.

        It runs once per request: on the thread's first message, and again only to
        follow up its own question (up to ``max_asks``). Once it has verified, or the
        agent has started working, later messages of the thread are part of the same
        request and go straight to the agent (``/new`` starts a new request).
        """
        if any(_is_agent_work(m) for m in messages):
            return None
        asked = [r for r in map(request_in, messages) if r is not None]
        own = [r for r in asked if r.tool_call_id.startswith(CLARIFY_FIRST_CALL_PREFIX)]
        response = answered_response(messages)
        if response is not None and not any(r.request_id == response.get("request_id") for r in own):
            return None  # answering the agent's own question: the agent is mid-task
        if len(own) >= self.max_asks:
            return None
        prompt = CLARIFY_FIRST_PROMPT.format(already_asked=ALREADY_ASKED_NOTE if asked else "")
        # The check calls the model directly, so it patches unfinished calls itself.
        history = with_every_call_answered([m for m in messages if not isinstance(m, SystemMessage)])
        return [SystemMessage(content=prompt), *history]

    @staticmethod
    def _outcome(decision: ClarifyWithUser | None) -> dict[str, Any] | None:
        """The state update for a decision: a question and the end, or the verification."""
        if decision is None:
            return None  # the check failed every attempt: the agent goes on without it
        if decision.need_clarification and decision.question.strip():
            call_id = f"{CLARIFY_FIRST_CALL_PREFIX}{uuid.uuid4().hex[:20]}"
            args = {"question": decision.question.strip(), "clarification_type": "missing_info"}
            ask = AIMessage(content="", tool_calls=[{"name": ASK_CLARIFICATION, "args": args, "id": call_id}])
            request = normalize_request(args, tool_call_id=call_id)
            return {"messages": [ask, clarification_tool_message(request)], "jump_to": "end"}
        if decision.verification.strip():
            verification = AIMessage(
                content=decision.verification.strip(), additional_kwargs={VERIFICATION_KEY: True}
            )
            return {"messages": [verification]}
        return None

    def _ending_with_the_person(self, request: ModelRequest) -> ModelRequest:
        """The model request without a trailing verification, for a provider's model.

        Newer Anthropic models refuse a conversation that ends with the assistant's message
        (a "prefill"); the verification is for the person, and later turns include it.
        In-process models (offline, scripted) get it: a script counts it as a turn.
        """
        messages = request.messages
        if self.to_provider and messages and is_verification(messages[-1]):
            return request.override(messages=messages[:-1])
        return request

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the agent's model on a conversation that ends with the person's message."""
        return handler(self._ending_with_the_person(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        """Async twin of ``wrap_model_call``."""
        return await handler(self._ending_with_the_person(request))

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Ask first, or confirm what was understood, before the agent's first model call."""
        check_input = self._check_input(state["messages"])
        if check_input is None:
            return None
        decision = None
        for attempt in range(self.retries):
            try:
                result = await self.structured.ainvoke(check_input)
            except Exception:  # a malformed answer is retried; the run must not fail on the check
                log.warning("clarify-first check failed (attempt %d)", attempt + 1, exc_info=True)
                continue
            if isinstance(result, ClarifyWithUser):
                decision = result
                break
        return self._outcome(decision)

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        """Sync twin of ``abefore_agent``."""
        check_input = self._check_input(state["messages"])
        if check_input is None:
            return None
        decision = None
        for attempt in range(self.retries):
            try:
                result = self.structured.invoke(check_input)
            except Exception:
                log.warning("clarify-first check failed (attempt %d)", attempt + 1, exc_info=True)
                continue
            if isinstance(result, ClarifyWithUser):
                decision = result
                break
        return self._outcome(decision)
