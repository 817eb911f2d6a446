"""The offline demo model: no weights, no key, deterministic, and it shows every input mode.

Plain requests pick what it does: "create a project" asks a form, "delete the test
data" asks a risk confirmation, "which database?" offers options, a vague one-word
request asks free text; after the answer it replies with what the person answered.
Chinese requests ("创建一个项目", "删除测试数据", "用哪个数据库？", "报告") get the same
questions and replies in Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from clarigate.agent.models.conversation import (
    answered_response,
    conversation_call_id,
    last_human_text,
    system_text,
)
from clarigate.agent.models.local import LocalChatModel
from clarigate.agent.models.offline_text import DATABASE_CHOICE, DELETE_CONFIRMATION, PROJECT_FORM, say
from clarigate.agent.prompts import ALREADY_ASKED_NOTE, CLARIFY_FIRST_MARKER
from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.models import Locale
from clarigate.agent.tools import ASK_CLARIFICATION
from clarigate.agent.who import speaker_of

GREETINGS = {"hi", "hello", "hey", "help", "thanks", "你好", "您好", "帮助", "谢谢"}
ANSWER_PREFIX = re.compile(r"my answer is:\s*(.*)$", re.DOTALL)
_END_PUNCTUATION = "!?.！？。"
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
#: A Chinese request this short (no spaces between words) is as vague as one English word.
_VAGUE_CJK_CHARS = 4


def _is_vague(text: str) -> bool:
    """One word ("reports"), or a few Chinese characters ("报告"): too little to act on."""
    core = text.strip().strip(_END_PUNCTUATION)
    if not core or core.lower() in GREETINGS:
        return False
    if detect_locale(core) == "zh":
        return len(core) <= _VAGUE_CJK_CHARS and len(core.split()) == 1
    return len(core.split()) == 1


def _vague_question(word: str, locale: Locale) -> dict[str, Any]:
    return {
        "question": say("vague_question", locale, word=word),
        "clarification_type": "ambiguous_requirement",
        "context": say("vague_context", locale),
    }


def _ask_for(text: str) -> dict[str, Any] | None:
    """The clarification a plain request calls for, if any, in the request's language."""
    lowered = text.lower()
    locale = detect_locale(text)
    if ("project" in lowered or "项目" in text) and any(
        w in lowered for w in ("create", "new", "start", "创建", "新建")
    ):
        return PROJECT_FORM[locale]
    if any(w in lowered for w in ("delete", "drop", "remove", "wipe", "删除", "清空")):
        return DELETE_CONFIRMATION[locale]
    if "database" in lowered or "数据库" in text:
        return DATABASE_CHOICE[locale]
    if _is_vague(text):
        return _vague_question(text.strip().strip(_END_PUNCTUATION), locale)
    return None


def _question_of(messages: Sequence[BaseMessage], request_id: str) -> dict[str, Any]:
    """The request (artifact) that ``request_id`` answers, or an empty dict."""
    for m in reversed(messages):
        artifact = getattr(m, "artifact", None) if isinstance(m, ToolMessage) else None
        request = artifact.get("human_input") if isinstance(artifact, dict) else None
        if isinstance(request, dict) and request.get("request_id") == request_id:
            return request
    return {}


def _reply_to_answer(response: dict[str, Any], request: dict[str, Any], locale: Locale) -> str:
    """A reply that uses what the person answered, in ``locale`` (``_follow_up_locale``)."""
    value = str(response.get("value", ""))
    values = response.get("values") or {}
    if response.get("response_kind") == "form" and "name" in values:
        not_set = say("not_set", locale)
        return say(
            "created",
            locale,
            name=values["name"],
            language=values.get("language") or say("default_language", locale),
            private=say("private" if values.get("private") else "public", locale),
            deadline=values.get("deadline") or not_set,
            team_size=values.get("team_size") or not_set,
        )
    if request.get("clarification_type") == "risk_confirmation":
        yes = value.lower().startswith(("yes", "confirm", "是", "确认", "确定"))
        return say("deleted" if response.get("option_id") == "option-1" or yes else "kept", locale)
    if response.get("response_kind") == "declined":  # cancelled: its value is a marker, not an answer
        return say("declined", locale)
    if response.get("response_kind") == "option":
        return say("going_with", locale, value=value)
    return say("understood", locale, value=value)


def _speaker_locale() -> Locale | None:
    """The person's language the run carries (the speaker's ``locale``, ``clarigate.agent.who``),
    None outside a run or when it carries none."""
    from langgraph.config import get_config

    try:
        speaker = speaker_of(get_config())
    except RuntimeError:  # called outside a run (no config)
        return None
    sender: Mapping[str, Any] = speaker.get("sender") or {} if speaker else {}
    tag = str(sender.get("locale") or "").strip().lower()
    return None if not tag else "zh" if tag.startswith("zh") else "en"


def _follow_up_locale(response: dict[str, Any], request: dict[str, Any], fallback: Locale) -> Locale:
    """The language of the demo's own words after an answer: the person's, as the run says it
    (``_speaker_locale``), else as their typed answer shows it, else the question's (the
    language of the request it asks about)."""
    if (explicit := _speaker_locale()) is not None:
        return explicit
    typed = str(response.get("value", "")) if response.get("response_kind") == "text" else ""
    if detect_locale(typed) == "zh":
        return "zh"
    if _LATIN_WORD.search(typed):  # digits or a lone letter say nothing of a language
        return "en"
    return "zh" if request.get("locale", fallback) == "zh" else "en"


def demo_reply(messages: Sequence[BaseMessage]) -> tuple[str, dict[str, Any] | None]:
    """What the demo model says: text, and the clarification arguments when it asks."""
    text = last_human_text(messages)
    locale = detect_locale(text)
    last = messages[-1] if messages else None
    if isinstance(last, ToolMessage):
        return say("no_one_answered", locale, text=text), None
    response = answered_response(messages)
    if response is not None:
        request = _question_of(messages, str(response.get("request_id")))
        return _reply_to_answer(response, request, _follow_up_locale(response, request, locale)), None
    if match := ANSWER_PREFIX.search(text):  # an answer typed without the structure
        typed = match.group(1).strip()
        return _reply_to_answer({"response_kind": "text", "value": typed}, {}, detect_locale(typed)), None
    ask = _ask_for(text)
    if ask is not None:
        return "", ask
    hint = say("demo_hint", locale)
    if text.lower().strip(_END_PUNCTUATION) in GREETINGS:
        return say("greeting", locale, hint=hint), None
    return say("plain", locale, text=text, hint=hint), None


def clarify_first_decision(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """The demo model's answer to the clarify-first check (``ClarifyWithUser`` arguments)."""
    text = last_human_text(messages)
    locale = detect_locale(text)
    if ALREADY_ASKED_NOTE not in system_text(messages) and _is_vague(text):
        return {
            "need_clarification": True,
            "question": say("what_exactly", locale, text=text),
            "verification": "",
        }
    return {
        "need_clarification": False,
        "question": "",
        "verification": say("starting", locale, text=text),
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
