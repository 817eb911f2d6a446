"""One catalog of the words and icons people read, in English and Chinese.

Every line the gateway, the protocol's text fallback, approvals, run limits, the terminal and
each adapter show comes from here, so a command reads the same on every platform and a
translation is made once. ``text(key, locale, **fields)`` fills a line's ``{placeholders}`` (a
quoted value that already ends its sentence, ``“Book the trip?”``, is not given the line's full
stop too); ``icon(kind)`` is the icon of a clarification type or a status. The protocol package
is a leaf every side imports, so this module imports nothing of the gateway's or the adapters'.
The words risk confirmations are read by live in ``risk_words``, the lines themselves in
``words`` (those only Telegram shows in ``telegram_words``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..models import Locale
from .risk_words import AFFIRMATIVE_WORDS as AFFIRMATIVE_WORDS
from .risk_words import NEGATIVE_WORDS as NEGATIVE_WORDS
from .risk_words import RISK_WORDS as RISK_WORDS
from .words import WORDS as WORDS

#: The languages every key has (a test checks each key has both, with the same placeholders).
LOCALES: tuple[Locale, ...] = ("en", "zh")

#: Icons by clarification type (``HumanInputRequest.clarification_type``) and by status.
ICONS: dict[str, str] = {
    "missing_info": "❓",
    "ambiguous_requirement": "🤔",
    "approach_choice": "🔀",
    "risk_confirmation": "⚠️",
    "suggestion": "💡",
    "warning": "⚠️",  # an error notice
    "working": "⏳",  # a run that has nothing to show yet
}
DEFAULT_ICON = "❓"

#: A ``{slot}`` between quotes, then the line's own full stop (``“{question}”.``, ``「{question}」。``).
_QUOTED_THEN_STOP = re.compile(r"(?<!\{)(\{(\w+)\}[”」』\"’])[.。]")
#: What already ends a sentence: a quoted value ending in one needs no second stop after its quote.
_SENTENCE_ENDS = (".", "?", "!", "。", "？", "！", "…")


def text(key: str, locale: Locale = "en", **fields: object) -> str:
    """The line ``key`` in ``locale`` (English when there is none), its ``{placeholders}`` filled.

    An unknown key raises ``KeyError``: a typo is a bug, not a blank line.
    """
    line = WORDS[key].get(locale) or WORDS[key]["en"]
    if not fields:
        return line
    return _QUOTED_THEN_STOP.sub(lambda m: _stop_once(m, fields), line).format(**fields)


def _stop_once(quoted: re.Match[str], fields: dict[str, object]) -> str:
    """``“{question}”.`` as it is, or without its stop when the quoted value already ends a
    sentence (``“Book the trip?”``, not ``“Book the trip?”.``); the value itself is untouched."""
    value = fields.get(quoted.group(2))
    ends = value is not None and str(value).rstrip().endswith(_SENTENCE_ENDS)
    return quoted.group(1) if ends else quoted.group(0)


#: The name most call sites use (renderers, answers, forms): the same function.
ui_text = text


def joined(items: Iterable[str], locale: Locale = "en", sep: str = "list_sep") -> str:
    """``红，蓝`` / ``red, blue``: ``items`` joined with the locale's ``sep`` (``item_sep``: ``；``)."""
    return text(sep, locale).join(items)


def labelled(label: str, value: str, locale: Locale = "en") -> str:
    """``名称：小明`` / ``Name: Alice``."""
    return f"{label}{text('label_sep', locale)}{value}"


def bracketed(inner: str, locale: Locale = "en") -> str:
    """``（7 秒）`` / `` (7 s)``: an aside after a text, its leading space English only."""
    return text("bracketed", locale, inner=inner)


def unnamed(key: str, locale: Locale = "en", seconds: int | None = None) -> str:
    """``voice message (7 s)`` / ``语音消息（7 秒）``: what a person sent with no name of its own,
    by its catalog ``key`` (``attachment_voice``) and, for a recording, its length."""
    length = "" if seconds is None else bracketed(text("attachment_seconds", locale, seconds=seconds), locale)
    return text(key, locale) + length


def json_error(error: ValueError, locale: Locale = "en") -> str:
    """Where a text stops being JSON (``第 1 行第 5 列``), not Python's English reason."""
    if isinstance(error, json.JSONDecodeError):
        return text("json_position", locale, line=error.lineno, column=error.colno)
    return str(error)


def every(key: str) -> set[str]:
    """``key`` in every language, for matching what a person typed ("Approve" or "批准")."""
    return set(WORDS[key].values())


def icon(kind: str) -> str:
    """The icon of a clarification type or a status; ``❓`` for a kind without one."""
    return ICONS.get(kind, DEFAULT_ICON)


def age_text(seconds: float, locale: Locale = "en") -> str:
    """``3 minutes`` / ``3 分钟``: a duration in its largest whole unit (at least 1 second)."""
    seconds = max(int(seconds), 1)
    for size, unit in ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size:
            count = seconds // size
            return text(f"age_{unit}" if count == 1 else f"age_{unit}s", locale, count=count)
    raise AssertionError("unreachable: the last unit is one second")
