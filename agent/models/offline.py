"""The offline demo model: no weights, no key, deterministic, and it shows every input mode.

Plain requests pick what it does: "create a project" asks a form, "delete the test
data" asks a risk confirmation, "which database?" offers options, a vague one-word
request asks free text; after the answer it replies with what the person answered.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from agent.models.conversation import (
    answered_response,
    conversation_call_id,
    last_human_text,
    system_text,
)
from agent.models.local import LocalChatModel
from agent.prompts import ALREADY_ASKED_NOTE, CLARIFY_FIRST_MARKER
from agent.tools import ASK_CLARIFICATION

PROJECT_FORM = {
    "question": "Tell me about the new project.",
    "clarification_type": "missing_info",
    "context": "I need a few details before I create it.",
    "fields": [
        {
            "name": "name",
            "label": "Project name",
            "type": "text",
            "required": True,
            "placeholder": "my-project",
        },
        {
            "name": "language",
            "label": "Language",
            "type": "select",
            "options": ["Python", "TypeScript", "Go"],
        },
        {"name": "private", "label": "Private repository", "type": "checkbox"},
        {"name": "deadline", "label": "Deadline", "type": "date", "placeholder": "YYYY-MM-DD"},
        {"name": "team_size", "label": "Team size", "type": "number"},
    ],
}
DELETE_CONFIRMATION = {
    "question": "Delete the test data? This cannot be undone.",
    "clarification_type": "risk_confirmation",
    "context": "Deleting removes every record in the test dataset.",
    "options": ["Yes, delete it", "No, keep it"],
}
DATABASE_CHOICE = {
    "question": "Which database should I use?",
    "clarification_type": "approach_choice",
    "context": "Each fits a different workload.",
    "options": ["PostgreSQL", "SQLite", "Redis"],
}
GREETINGS = {"hi", "hello", "hey", "help", "thanks", "你好", "帮助"}
DEMO_HINT = (
    "(Offline demo model: try “create a project”, “delete the test data”, “which database?” "
    "or a one-word request to see each kind of question.)"
)
ANSWER_PREFIX = re.compile(r"my answer is:\s*(.*)$", re.DOTALL)


def _vague_question(word: str) -> dict[str, Any]:
    return {
        "question": f"What would you like me to do about “{word}”?",
        "clarification_type": "ambiguous_requirement",
        "context": "A sentence about the goal is enough.",
    }


def _ask_for(text: str) -> dict[str, Any] | None:
    """The clarification a plain request calls for, if any."""
    lowered = text.lower()
    if ("project" in lowered or "项目" in text) and any(
        w in lowered for w in ("create", "new", "start", "创建", "新建")
    ):
        return PROJECT_FORM
    if any(w in lowered for w in ("delete", "drop", "remove", "wipe", "删除")):
        return DELETE_CONFIRMATION
    if "database" in lowered or "数据库" in lowered:
        return DATABASE_CHOICE
    words = text.split()
    if len(words) == 1 and lowered.strip("!?.") not in GREETINGS:
        return _vague_question(words[0].strip("!?."))
    return None


def _question_of(messages: Sequence[BaseMessage], request_id: str) -> dict[str, Any]:
    """The request (artifact) that ``request_id`` answers, or an empty dict."""
    for m in reversed(messages):
        artifact = getattr(m, "artifact", None) if isinstance(m, ToolMessage) else None
        request = artifact.get("human_input") if isinstance(artifact, dict) else None
        if isinstance(request, dict) and request.get("request_id") == request_id:
            return request
    return {}


def _reply_to_answer(response: dict[str, Any], request: dict[str, Any]) -> str:
    """A reply that uses what the person answered."""
    value = str(response.get("value", ""))
    values = response.get("values") or {}
    if response.get("response_kind") == "form" and "name" in values:
        private = "private" if values.get("private") else "public"
        return (
            f"Created the project “{values['name']}” in {values.get('language') or 'the default language'} "
            f"({private}, deadline {values.get('deadline') or 'not set'}, "
            f"team size {values.get('team_size') or 'not set'}). (Demo: nothing was really created.)"
        )
    if request.get("clarification_type") == "risk_confirmation":
        if response.get("option_id") == "option-1" or value.lower().startswith("yes"):
            return "Deleted the test data. (Demo: nothing was really deleted.)"
        return "Understood: I left the test data untouched."
    if response.get("response_kind") == "option":
        return f"Going with {value}: next I would set up the connection settings and a first migration."
    return f"Thanks, now I understand: “{value}”. My plan: confirm the goal, list the steps, then do them."


def demo_reply(messages: Sequence[BaseMessage]) -> tuple[str, dict[str, Any] | None]:
    """What the demo model says: text, and the clarification arguments when it asks."""
    text = last_human_text(messages)
    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage):
        return (
            f"No one could answer, so I went ahead with sensible defaults for “{text}” "
            "and noted my assumptions."
        ), None
    response = answered_response(messages)
    if response is not None:
        return _reply_to_answer(response, _question_of(messages, str(response.get("request_id")))), None
    if match := ANSWER_PREFIX.search(text):  # an answer typed without the structure
        return _reply_to_answer({"response_kind": "text", "value": match.group(1).strip()}, {}), None
    ask = _ask_for(text)
    if ask is not None:
        return "", ask
    if text.lower().strip("!?.") in GREETINGS:
        return f"Hello! I ask before I guess. {DEMO_HINT}", None
    return (
        f"Here is how I would handle “{text}”: make sure I understand the goal, plan, then act. {DEMO_HINT}",
        None,
    )


def clarify_first_decision(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """The demo model's answer to the clarify-first check (``ClarifyWithUser`` arguments)."""
    text = last_human_text(messages)
    if ALREADY_ASKED_NOTE not in system_text(messages) and len(text.split()) == 1:
        return {
            "need_clarification": True,
            "question": f"What exactly do you mean by “{text}”?",
            "verification": "",
        }
    return {
        "need_clarification": False,
        "question": "",
        "verification": f"Understood: “{text}”. I will start on it now.",
    }


class OfflineDemoModel(LocalChatModel):
    """The default model (``LLM_MODEL=offline``): deterministic, offline, every input mode."""

    @property
    def _llm_type(self) -> str:
        return "clarigate-offline-demo"

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The AI message for this conversation."""
        if CLARIFY_FIRST_MARKER in system_text(messages):
            call = {
                "name": "ClarifyWithUser",
                "args": clarify_first_decision(messages),
                "id": conversation_call_id(messages, 0),
                "type": "tool_call",
            }
            return AIMessage(content="", tool_calls=[call])
        content, ask = demo_reply(messages)
        if ask is None:
            return AIMessage(content=content)
        call = {
            "name": ASK_CLARIFICATION,
            "args": ask,
            "id": conversation_call_id(messages, 0),
            "type": "tool_call",
        }
        return AIMessage(content=content, tool_calls=[call])
