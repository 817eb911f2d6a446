"""Run events read off LangGraph's stream: the ``messages`` mode gives text, ``updates`` the steps,
``custom`` the graph's own progress lines.

Works on message objects (the in-process graph) and on their JSON form (a LangGraph server's
``messages-tuple`` and ``updates`` events), so both runners show the same progress.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from clarigate.agent.events import Asking, Progress, RunEvent, TextDelta, ToolFinished, ToolStarted
from clarigate.agent.protocol.graphemes import shorten
from clarigate.agent.tools import ASK_CLARIFICATION

#: Message types whose text is the answer being written.
_AI_TYPES = {"ai", "AIMessageChunk"}
#: A progress line is cut to this many characters (it is one status line of the live message).
PROGRESS_CHARS = 120
#: The key of a ``custom`` event that is a progress line: ``writer({"progress": "…"})``.
PROGRESS_KEY = "progress"


def _field(message: Any, name: str, default: Any = None) -> Any:
    if isinstance(message, Mapping):
        return message.get(name, default)
    return getattr(message, name, default)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else block.get("text", "")
            for block in content
            if isinstance(block, str) or (isinstance(block, Mapping) and block.get("type") == "text")
        ]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


#: The nodes LangChain's ``create_agent`` adds for a middleware's hooks: ``<Middleware name>.<hook>``
#: (its ``wrap_model_call`` and ``wrap_tool_call`` run inside the ``model`` and ``tools`` nodes).
MIDDLEWARE_HOOKS = (".before_agent", ".before_model", ".after_model", ".after_agent")


def _is_model_node(metadata: Mapping[str, Any] | None) -> bool:
    """True unless the text came from a middleware hook's own model call (clarify-first's
    structured check, a summary): those are not the answer. Any other node's text is, a node of
    an operator's graph named with a dot (``answer.v2``) too. A call tagged ``nostream`` (a
    router's classifier) LangGraph's ``messages`` mode leaves out itself."""
    node = str((metadata or {}).get("langgraph_node") or "")
    return not node.endswith(MIDDLEWARE_HOOKS)


def text_delta(message: Any, metadata: Mapping[str, Any] | None = None) -> TextDelta | None:
    """The answer text in one ``messages``-mode item, or None (tool messages, tool-call chunks,
    middleware calls, empty chunks)."""
    if _field(message, "type") not in _AI_TYPES or not _is_model_node(metadata):
        return None
    text = _text(_field(message, "content"))
    if not text:
        return None
    return TextDelta(text=text, message_id=_field(message, "id"))


def _messages_of(update: Any) -> list[Any]:
    if not isinstance(update, Mapping):
        return []
    messages = update.get("messages")
    if isinstance(messages, list | tuple):
        return list(messages)
    value = getattr(messages, "value", None)  # Overwrite(...)
    return list(value) if isinstance(value, list | tuple) else []


def step_events(
    updates: Mapping[str, Any], descriptions: Mapping[str, str] | None = None
) -> Iterator[RunEvent]:
    """The steps in one ``updates``-mode item: tools called and answered, a question asked."""
    if "__interrupt__" in updates:
        yield Asking()
        return
    for update in updates.values():
        for message in _messages_of(update):
            kind = _field(message, "type")
            if kind == "ai":
                for call in _field(message, "tool_calls") or []:
                    name = str(_field(call, "name") or "")
                    if name == ASK_CLARIFICATION:
                        yield Asking()
                    elif name:
                        call_id = str(_field(call, "id") or "")
                        yield ToolStarted(name, call_id, (descriptions or {}).get(name))
            elif kind == "tool":
                name = str(_field(message, "name") or "")
                if name and name != ASK_CLARIFICATION:
                    ok = _field(message, "status", "success") != "error"
                    yield ToolFinished(name, str(_field(message, "tool_call_id") or ""), ok)


def progress_line(payload: Any) -> Progress | None:
    """The progress line in one ``custom``-mode item: a string, or ``{"progress": "…"}``; None for
    anything else (a graph may stream other data for other clients). Whitespace and line breaks
    become single spaces, and a long line is cut (``PROGRESS_CHARS``; never inside a character as
    shown: ``graphemes``)."""
    if isinstance(payload, Mapping):
        payload = payload.get(PROGRESS_KEY)
    if not isinstance(payload, str):
        return None
    line = " ".join(payload.split())
    line = shorten(line, PROGRESS_CHARS, strip=True)
    return Progress(line) if line else None
