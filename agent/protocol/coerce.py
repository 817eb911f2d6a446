"""Lenient readers for the loose values models and people send (strings, JSON text, yes/no).

Shared by normalization (model arguments) and answer checking (platform values,
typed replies), so both sides agree on what "true", "是" or "Ｖｕｅ" mean.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from .graphemes import shorten
from .models import MAX_STRING

_TRUE_WORDS = frozenset(
    {"true", "yes", "y", "on", "1", "checked", "是", "是的", "对", "好", "好的", "可以", "确定", "行", "要"}
)
_FALSE_WORDS = frozenset(
    {"false", "no", "n", "off", "0", "unchecked", "否", "不", "不是", "不对", "不用", "没有", "不要", "不行"}
    | {"不可以", "不需要"}
)

# Characters platforms and JSON encoders choke on: C0/C1 controls (but keep tab and
# newline), lone surrogates a JSON string can smuggle in as "\ud800", and the byte order mark
# (whitespace to JavaScript, not to Python: a BOM-only label is blank to DeerFlow's client).
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufeff]")
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """A comparison key: NFKC (full-width → half-width), case-folded, whitespace collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def fold_capitals(text: str) -> str:
    """A looser comparison key than ``fold``: ``fold`` of the text in capitals, so a word typed in
    Turkish capitals meets its lower case ("ILIK" and "ılık"): "I" is the capital of "ı", which
    ``fold`` keeps apart from "i"; and "İ", the capital of "i", is "I" there too ("ŞEHİR" and
    "şehir", whose capitals are "ŞEHIR")."""
    return fold(text.upper().replace("İ", "I"))


def clean(text: str) -> str:
    """``text`` without control characters or lone surrogates, trimmed."""
    return _UNSAFE_CHARS.sub("", text).strip()


def one_line(text: str) -> str:
    """``text`` cleaned with every run of whitespace (newlines too) made one space."""
    return _SPACES.sub(" ", clean(text)).strip()


def cut(text: str, limit: int = MAX_STRING) -> str:
    """``text`` shortened to at most ``limit`` characters, ending in ``…`` when cut, never inside a
    character as shown (an emoji sequence, a flag, a letter and its accent: ``graphemes``)."""
    return shorten(text, limit, strip=True)


def scalar_text(value: Any) -> str | None:
    """A string for a scalar (str, number, bool); ``None`` for anything else or blank."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        text = clean(str(value))
        return text or None
    return None


def parse_bool(value: Any) -> bool | None:
    """``True``/``False`` for booleans, 1/0 and yes/no words (English and Chinese); else ``None``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = fold(value).rstrip(".!。！")
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    return None


def maybe_json(value: Any) -> Any:
    """``value`` decoded when it is a string holding a JSON list or object; else unchanged."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                return json.loads(text)
            except (ValueError, RecursionError):  # not JSON after all, or absurdly nested
                return value
    return value
