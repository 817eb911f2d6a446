"""The gateway's own short messages (errors, refusals, ``/new``), in the person's language.

The agent answers in the language it is written to; these lines come from the
gateway itself, so they follow the same rule: Chinese when the person wrote
Chinese (or the question was asked in Chinese), else English.
"""

from __future__ import annotations

import re

from agent.protocol import detect_locale
from agent.protocol.models import Locale

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
    "run_too_long": {
        "en": "Sorry, that took too long and I stopped. Please try again, perhaps with a smaller request.",
        "zh": "抱歉，处理时间过长，我已停止。请再试一次，或把请求拆小一些。",
    },
    "refused": {
        "en": "Sorry, I am not set up to work with you here. Ask the bot's administrator for access.",
        "zh": "抱歉，我在这里无法为您服务。请联系机器人的管理员开通权限。",
    },
}


def notice(key: str, locale: Locale = "en") -> str:
    """The notice ``key`` in ``locale`` (English when there is no translation)."""
    texts = NOTICES[key]
    return texts.get(locale) or texts["en"]


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


def notice_for_text(key: str, text: str, hint: Locale | None = None) -> str:
    """The notice ``key`` in the language of ``text`` (what the person wrote), else of ``hint``."""
    return notice(key, locale_for(text, hint))
