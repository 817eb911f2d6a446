"""A photo or file sent with the answer to an interrupt goes to the agent with it.

The answer resumes the interrupt (``Command(resume=…)``); its photos and files go as a human
message (``ClarifyingAgent._content``'s shape), placed where the model reads them after the answer:

- the built-in agent with approvals has a ``before_model`` hook (``AnswerAttachmentsMiddleware``):
  the message is held in its own channel by the resume's ``update`` and added to the messages
  right before the next model call, so after the tool results the decision produced (a message
  between a tool call and its result would break the pending calls: providers refuse it);
- an own graph with a ``messages`` channel and no tool call left unanswered gets it in the
  resume's ``update``: LangGraph applies it before the resumed node runs again, so the node (and
  what it writes) comes after it;
- any other graph cannot be given it: the person is told (``attachment_not_passed``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import OmitFromInput, PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.agent.turn_output import TurnOutput

log = logging.getLogger(__name__)

#: The built-in agent's channel holding an answer's photos and files until the next model call.
HELD = "clarigate_answer_attachments"


class _HeldState(AgentState):
    clarigate_answer_attachments: NotRequired[Annotated[list[AnyMessage], OmitFromInput, PrivateStateAttr]]


class AnswerAttachmentsMiddleware(AgentMiddleware):
    """Adds the photos and files held by an answer's resume to the messages before the model call."""

    state_schema = _HeldState

    def before_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        held: Any = state.get(HELD) or []
        return {"messages": list(held), HELD: []} if held else None

    async def abefore_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        return self.before_model(state, runtime)


def unanswered_calls(messages: Sequence[Any]) -> bool:
    """True when the last model message's tool calls are not all answered by tool messages."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AIMessage):
            answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
            return any(call.get("id") not in answered for call in message.tool_calls)
    return False


def update_for(channels: Collection[str], before: Sequence[Any], human: Any) -> dict[str, Any] | None:
    """The resume's ``update`` carrying ``human`` (the answer's photos and files) to a graph of
    these state ``channels`` (in process: the graph's; on a LangGraph server: its state schema's
    properties); None when it cannot be given it (see the module's docstring)."""
    if HELD in channels:
        return {HELD: [human]}
    if "messages" in channels and not unanswered_calls(before):
        return {"messages": [human]}
    return None


@dataclass(frozen=True)
class Carried:
    """How an answer's photos and files go with its resume: ``update`` for the resume's command,
    ``note`` for the person when they cannot go (both None when the answer came without any)."""

    update: dict[str, Any] | None = None
    note: str | None = None

    def command(self, command: Any) -> Any:
        """``command`` (a ``Command(resume=…)``, or None to go on) with the update."""
        from langgraph.types import Command

        if not self.update:
            return command
        if command is None:
            return Command(update=self.update)
        return Command(resume=command.resume, update=self.update)

    def told(self, output: TurnOutput) -> TurnOutput:
        """``output`` with the note first when the photos and files did not reach the agent."""
        return replace(output, replies=[self.note, *output.replies]) if self.note else output

    def asked_again(self, output: TurnOutput, locale: Locale) -> TurnOutput:
        """``output`` asking again (the answer settled nothing: nothing resumed) with a line first,
        when the answer came with photos or files, saying they were not passed on either."""
        if self.update is None and self.note is None:
            return output
        return replace(output, replies=[ui_text("attachment_asked_again", locale), *output.replies])


def carried(
    graph: Any,
    before: Sequence[Any],
    sent: tuple[str, Sequence[Any]] | None,
    content: Callable[[str, Sequence[Any]], Any],
    locale: Locale,
) -> Carried:
    """How the answer's photos and files (``sent``: the answer's text and images, None when it
    came with none; ``content`` making a human message's content of them) go with its resume on
    ``graph``, whose thread's messages are ``before``."""
    human = lambda text, images: HumanMessage(content=content(text, images), id=str(uuid.uuid4()))  # noqa: E731
    return carried_to(getattr(graph, "channels", None) or {}, before, sent, human, locale)


def carried_to(
    channels: Collection[str],
    before: Sequence[Any],
    sent: tuple[str, Sequence[Any]] | None,
    human: Callable[[str, Sequence[Any]], Any],
    locale: Locale,
) -> Carried:
    """``carried`` for a graph of these state ``channels``, ``human`` making the message of the
    answer's text and images (a LangGraph server's graph: a message as the server takes it)."""
    if sent is None:  # the answer came with no photo or file (``RunInput.attached``)
        return Carried()
    update = update_for(channels, before, human(*sent))
    if update is not None:
        return Carried(update=update)
    log.info("an answer's photos or files cannot be given to this graph: the person is told")
    return Carried(note=ui_text("attachment_not_passed", locale))
