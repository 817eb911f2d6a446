"""The agent as the gateway uses it: one turn in, replies or a clarification out.

The gateway's runner calls ``ClarifyingAgent.run_turn``; it never touches
LangGraph directly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.protocol import HumanInputRequest, HumanInputResponse

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.tools import BaseTool

    from agent.checkpoint import Checkpointer

_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class AgentSettings:
    """What builds an agent: model, checkpointer and the clarification switches."""

    model: str = "offline"  # LLM_MODEL: "offline", "scripted:PATH", "provider:model"
    checkpointer_url: str | None = None  # CHECKPOINTER_URL; None: SQLite under data_dir
    data_dir: str = ".clarigate"
    allow_clarification: bool = False  # clarify-first phase before the agent acts
    disable_clarification: bool = False  # the tool answers "proceed with your best judgment"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AgentSettings:
        """Settings from ``LLM_MODEL``, ``CHECKPOINTER_URL``, ``CLARIGATE_DATA_DIR``,
        ``ALLOW_CLARIFICATION`` and ``DISABLE_CLARIFICATION`` (defaults where unset)."""
        env = os.environ if environ is None else environ
        return cls(
            model=env.get("LLM_MODEL") or cls.model,
            checkpointer_url=env.get("CHECKPOINTER_URL") or None,
            data_dir=env.get("CLARIGATE_DATA_DIR") or cls.data_dir,
            allow_clarification=env.get("ALLOW_CLARIFICATION", "").lower() in _TRUE,
            disable_clarification=env.get("DISABLE_CLARIFICATION", "").lower() in _TRUE,
        )


@dataclass(frozen=True)
class TurnOutput:
    """What one run produced: replies to show, and the request if the run asked."""

    replies: list[str] = field(default_factory=list)
    request: HumanInputRequest | None = None
    fallback_text: str | None = None  # the request's text fallback (ToolMessage content)


def turn_output(messages: Sequence[BaseMessage], human_id: str) -> TurnOutput:
    """The replies and the request among the messages that follow this turn's human message."""
    from langchain_core.messages import AIMessage

    from agent.middleware import request_in
    from agent.models.conversation import message_text

    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == human_id), -1)
    replies: list[str] = []
    request: HumanInputRequest | None = None
    fallback: str | None = None
    for message in messages[start + 1 :]:
        if isinstance(message, AIMessage) and not message.tool_calls:
            text = message_text(message).strip()
            if text:
                replies.append(text)
        elif (asked := request_in(message)) is not None:
            request, fallback = asked, message_text(message)
    return TurnOutput(replies=replies, request=request, fallback_text=fallback)


class ClarifyingAgent:
    """A LangGraph agent with the clarification protocol and a checkpointer.

    Use ``async with await ClarifyingAgent.create(settings) as agent`` or call
    ``aclose`` when done.
    """

    def __init__(self, graph: Any, checkpointer: Checkpointer) -> None:
        """Use ``create``; this only holds what it built."""
        self._graph = graph
        self._checkpointer = checkpointer

    @classmethod
    async def create(
        cls,
        settings: AgentSettings,
        *,
        model: BaseChatModel | None = None,
        tools: Sequence[BaseTool] = (),
    ) -> ClarifyingAgent:
        """Build the model, the checkpointer and the graph.

        ``model`` replaces the one ``settings.model`` names and ``tools`` are offered
        besides ``ask_clarification`` (both for embedding and tests).
        """
        from agent.checkpoint import open_checkpointer
        from agent.graph import build_agent_graph
        from agent.models import build_chat_model

        chat_model = model if model is not None else build_chat_model(settings.model)
        checkpointer = await open_checkpointer(settings.checkpointer_url, settings.data_dir)
        try:
            graph = build_agent_graph(
                chat_model,
                tools=tools,
                checkpointer=checkpointer.saver,
                allow_clarification=settings.allow_clarification,
                disable_clarification=settings.disable_clarification,
            )
        except BaseException:
            await checkpointer.aclose()
            raise
        return cls(graph, checkpointer)

    async def __aenter__(self) -> ClarifyingAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def run_turn(
        self, thread_id: str, text: str, response: HumanInputResponse | None = None
    ) -> TurnOutput:
        """Run one turn on ``thread_id``; ``response`` when ``text`` answers a clarification."""
        from langchain_core.messages import HumanMessage

        from agent.models.conversation import HUMAN_INPUT_RESPONSE_KEY

        extra = {HUMAN_INPUT_RESPONSE_KEY: response.to_payload()} if response is not None else {}
        human_id = str(uuid.uuid4())
        human = HumanMessage(content=text, id=human_id, additional_kwargs=extra)
        # "exit": one checkpoint write per turn instead of one per graph step (the saver
        # dominates a turn's cost); a crash mid-turn loses only that turn.
        result = await self._graph.ainvoke(
            {"messages": [human]}, {"configurable": {"thread_id": thread_id}}, durability="exit"
        )
        return turn_output(result["messages"], human_id)

    async def history(self, thread_id: str) -> list[BaseMessage]:
        """The messages kept for ``thread_id`` (empty for a new thread)."""
        snapshot = await self._graph.aget_state({"configurable": {"thread_id": thread_id}})
        return list(snapshot.values.get("messages", [])) if snapshot and snapshot.values else []

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The clarification ``thread_id`` waits for: its last message carries a request."""
        from agent.middleware import request_in

        messages = await self.history(thread_id)
        return request_in(messages[-1]) if messages else None

    async def delete_thread(self, thread_id: str) -> None:
        """Forget everything kept for ``thread_id``."""
        await self._checkpointer.saver.adelete_thread(thread_id)

    async def ping(self) -> bool:
        """True when the checkpointer answers (for ``/readyz``)."""
        return await self._checkpointer.ping()

    async def aclose(self) -> None:
        """Close the checkpointer's connections."""
        await self._checkpointer.aclose()
