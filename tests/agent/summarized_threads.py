"""A model and a tool for threads the built-in agent summarizes (``summarize_after_tokens``)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from clarigate.agent.models.conversation import conversation_call_id
from clarigate.agent.models.scripted import ScriptedChatModel

RAN: list[str] = []  # what ``export_table`` really did


def export_table(table: str) -> str:
    """Export ``table`` (a long result: the next model call summarizes the thread)."""
    RAN.append(f"export {table}")
    return f"rows of {table}: " + "r" * 6000


class ReadingModel(ScriptedChatModel):
    """Answers by what it reads, not by its turn number (a summarized thread holds fewer AI
    messages): "Exported users." after the tool's result; an ``export_table`` call for "clean
    up …"; the summary when asked for one (a long prompt, not a person's message); else "ok"."""

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The answer to the last message."""
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):
            return AIMessage(content="Exported users.")
        if isinstance(last, HumanMessage) and last.text.startswith("clean up"):
            call_id = conversation_call_id(messages, 0)
            call = {"name": "export_table", "args": {"table": "users"}, "id": call_id, "type": "tool_call"}
            return AIMessage(content="", tool_calls=[call])
        if isinstance(last, HumanMessage) and len(last.text) > 200:
            return AIMessage(content="summary of earlier turns")
        return AIMessage(content="ok")
