"""The catalog's lines only Slack's agent view shows (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

SLACK_WORDS: dict[str, dict[Locale, str]] = {
    # assistant.threads.setStatus while a run works: Slack shows "<app> is working on it…" and
    # rotates the loading messages (one a line; Slack takes ten at most)
    "slack_status": {"en": "is working on it…", "zh": "正在处理…"},
    "slack_loading": {
        "en": "Reading your message…\nThinking it over…\nChecking what I need to know…\n"
        "Putting the answer together…",
        "zh": "正在阅读您的消息…\n正在思考…\n正在确认需要了解的信息…\n正在整理回答…",
    },
    # assistant.threads.setSuggestedPrompts: the list's title, and the prompt offered when the
    # bot's YAML names none (slack.suggested_prompts)
    "slack_prompts_title": {"en": "Try asking", "zh": "可以这样问我"},
    "slack_prompt_title": {"en": "What can you do?", "zh": "你能做什么？"},
    "slack_prompt_message": {
        "en": "What can you help me with, and how do I ask?",
        "zh": "你能帮我做些什么？我应该怎么问？",
    },
}
