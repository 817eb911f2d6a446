"""The gateway's own short messages (errors, refusals, commands), in the person's language.

The agent answers in the language it is written to; these lines come from the
gateway itself, so they follow the same rule: Chinese when the person wrote
Chinese (or the question was asked in Chinese), else English.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.models import Locale

_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

NOTICES: dict[str, dict[Locale, str]] = {
    "new_thread": {
        "en": "Started a new conversation. What can I do for you?",
        "zh": "已开始新的对话。有什么可以帮您？",
    },
    "run_failed": {
        "en": "Sorry, I could not finish that: something went wrong on my side. Please try again.",
        "zh": "抱歉，我这边出了问题，没能完成。请再试一次。",
    },
    "agent_unavailable": {
        "en": "The agent is unreachable right now. Your message is kept: I will answer once it is back.",
        "zh": "智能体暂时无法连接。您的消息已保留，恢复后我会立即回复。",
    },
    "run_too_long": {
        "en": "Sorry, that took too long and I stopped. Please try again, perhaps with a smaller request.",
        "zh": "抱歉，处理时间过长，我已停止。请再试一次，或把请求拆小一些。",
    },
    "refused": {
        "en": "Sorry, I am not set up to work with you here. Ask the bot's administrator for access.",
        "zh": "抱歉，我在这里无法为您服务。请联系机器人的管理员开通权限。",
    },
    # --- live progress (gateway/flow/live.py) ---------------------------------------------------
    "tool_running": {"en": "🔧 {what}…", "zh": "🔧 {what}…"},
    "using_tool": {"en": "Using {tool}", "zh": "正在使用 {tool}"},
    "working_status": {"en": "⏳ Working…", "zh": "⏳ 处理中…"},
    # --- conversation control (gateway/flow/commands.py) ---------------------------------------------
    "greeting": {
        "en": "👋 Hi! I am an assistant that asks before it guesses. Tell me what you need.",
        "zh": "👋 您好！我是一个先问清楚再动手的助手。请告诉我您需要什么。",
    },
    "help": {
        "en": "Just write what you need. When I need more to go on I ask a question: answer with its "
        "buttons, or type the answer (an option's number or label, or `name: value` lines for a "
        "form). A message that is not an answer to the open question closes it and I take it as "
        "a new request.",
        "zh": "直接告诉我您需要什么。需要更多信息时我会提问：点按钮回答，或直接输入答案（选项编号或"
        "名称，表单则每行一个「名称: 值」）。不是回答当前问题的消息会关闭该问题，并作为新的请求处理。",
    },
    "commands": {"en": "Commands:", "zh": "命令："},
    "cmd_new": {
        "en": "start a new conversation (closes the open question)",
        "zh": "开始新的对话（关闭当前问题）",
    },
    "cmd_cancel": {
        "en": "dismiss the open question; I go on without the answer",
        "zh": "取消当前问题，我会在没有答案的情况下继续",
    },
    "cmd_status": {"en": "what I am doing in this chat", "zh": "查看我在这个对话里的进展"},
    "cmd_help": {"en": "this help", "zh": "显示本帮助"},
    "cancelled": {
        "en": "✖ Cancelled the question “{question}”. I will go on without the answer.",
        "zh": "✖ 已取消问题「{question}」，我会在没有答案的情况下继续。",
    },
    "nothing_to_cancel": {"en": "There is no open question to cancel.", "zh": "当前没有可以取消的问题。"},
    "still_working": {
        "en": "I am still working on your message; the answer will come here.",
        "zh": "我还在处理您的消息，结果会发到这里。",
    },
    "status_title": {"en": "Where this conversation stands:", "zh": "当前对话状态："},
    "status_question": {
        "en": "• Waiting for an answer to “{question}” (asked {age} ago).",
        "zh": "• 等待回答：「{question}」（{age}前提问）。",
    },
    "status_question_of": {
        "en": "• Waiting for {who} to answer “{question}” (asked {age} ago).",
        "zh": "• 等待 {who} 回答：「{question}」（{age}前提问）。",
    },
    "status_question_now": {
        "en": "• Waiting for an answer to “{question}”",
        "zh": "• 等待回答：「{question}」",
    },
    "status_no_question": {"en": "• No open question.", "zh": "• 没有待回答的问题。"},
    "status_waiting": {
        "en": "• Messages being worked on or waiting: {count}.",
        "zh": "• 正在处理或排队的消息：{count} 条。",
    },
    "status_idle": {"en": "• Nothing running or waiting.", "zh": "• 没有正在处理或排队的消息。"},
    "status_thread": {
        "en": "• This conversation started {age} ago; {new} starts a fresh one.",
        "zh": "• 本次对话开始于{age}前；{new} 可开始新的对话。",
    },
    "status_thread_unknown_age": {
        "en": "• A conversation is going on; {new} starts a fresh one.",
        "zh": "• 对话进行中；{new} 可开始新的对话。",
    },
    "status_no_thread": {
        "en": "• No conversation yet: send a message to start one.",
        "zh": "• 还没有对话：发一条消息即可开始。",
    },
    "answer_after_restart": {
        "en": "That answer was for the conversation before it was restarted, so I did not pass it on.",
        "zh": "该回答属于重新开始之前的对话，因此没有转交。",
    },
}

#: Units for how long ago something happened, largest first: (seconds, English, Chinese).
_UNITS: tuple[tuple[int, str, str], ...] = (
    (86_400, "day", "天"),
    (3_600, "hour", "小时"),
    (60, "minute", "分钟"),
    (1, "second", "秒"),
)


def age_text(seconds: float, locale: Locale = "en") -> str:
    """``3 minutes`` / ``3 分钟``: a duration in its largest whole unit (at least 1 second)."""
    seconds = max(int(seconds), 1)
    for size, english, chinese in _UNITS:
        if seconds >= size:
            count = seconds // size
            if locale == "zh":
                return f"{count} {chinese}"
            return f"{count} {english}{'' if count == 1 else 's'}"
    raise AssertionError("unreachable: the last unit is one second")


def notice(key: str, locale: Locale = "en", **values: str) -> str:
    """The notice ``key`` in ``locale`` (English when there is no translation), ``{placeholders}`` filled."""
    texts = NOTICES[key]
    text = texts.get(locale) or texts["en"]
    return text.format(**values) if values else text


def locale_for(text: str, hint: Locale | None = None) -> Locale:
    """The language of ``text``; ``hint`` (the person's client language) when the text has no signal.

    A leading command (``/start``, ``/help``) and its arguments (a deep-link payload) say nothing
    about the language, nor do digits, emoji or a lone letter.
    """
    if detect_locale(text) == "zh":
        return "zh"
    words = text.strip()
    if words.startswith("/"):  # the command's name says nothing; /start's payload is a code
        command, _, rest = words.partition(" ")
        words = "" if command.split("@")[0].lower() == "/start" else rest
    if _LATIN_WORD.search(words) or hint is None:
        return "en"
    return hint


def language_hint(language: str | None) -> Locale | None:
    """Our locale for a platform's language tag (``zh-hans``, ``en-US``), None when unknown."""
    if not language:
        return None
    return "zh" if language.lower().startswith("zh") else "en"


def notice_for_text(key: str, text: str, hint: Locale | None = None) -> str:
    """The notice ``key`` in the language of ``text`` (what the person wrote), else of ``hint``."""
    return notice(key, locale_for(text, hint))
