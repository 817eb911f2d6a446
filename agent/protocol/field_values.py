"""Type one raw form value by its field: platforms send strings, lists, bools or option ids.

``type_field_value`` answers ``(value, None)``, ``(None, message)`` for a value that
does not fit, or ``(BLANK, None)`` when nothing was given (the caller decides
whether that is allowed).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .catalog import joined, ui_text
from .coerce import clean, fold, fold_capitals, parse_bool, scalar_text
from .models import FormField, Locale, Option

#: Marker for "nothing given" (distinct from a given ``False`` or ``0``).
BLANK: Any = object()

_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_DATE_PREFIX = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?=$|[T\s+])")
_LIST_SEPARATORS = re.compile(r"([,，;；、\n]+)")
_INDEX = re.compile(r"#?(\d{1,3})[.)、]?")
_NUMBERS = re.compile(r"\s*\d{1,3}(?:\s+\d{1,3})+\s*")
# What a sentence ends with, after ``fold`` (full-width marks are already ASCII by then).
_TRAILING_MARKS = ".!?,;:。、…~ "


def type_field_value(field: FormField, raw: Any, locale: Locale) -> tuple[Any, str | None]:
    """The typed value of ``raw`` for ``field``, or an error message in ``locale``."""
    if raw is None or (isinstance(raw, str) and not clean(raw)):
        return BLANK, None
    if field.type == "checkbox":
        return _checkbox(raw, locale)
    if field.type == "number":
        return _number(_single(raw), locale)
    if field.type == "date":
        return _date(_single(raw), locale)
    if field.type == "select" and field.options:
        return _select(field.options, _single(raw), locale)
    if field.type == "multi_select" and field.options:
        return _multi_select(field.options, raw, locale)
    return _text(raw)


def number_text(value: Any) -> str | None:
    """A number as a person types it (and platforms' number inputs take it): digits, never an
    exponent, so ``1e+20`` reads ``100000000000000000000``; ``None`` for anything else."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return format(Decimal(repr(value)), "f") if isinstance(value, float) else str(value)


def _single(raw: Any) -> Any:
    """The lone item of a one-item list (some platforms wrap every value in a list)."""
    if isinstance(raw, (list, tuple)):
        if not raw:
            return None
        return raw[0] if len(raw) == 1 else raw
    return raw


def _checkbox(raw: Any, locale: Locale) -> tuple[Any, str | None]:
    if isinstance(raw, (list, tuple)):
        return bool(raw), None  # checker-style payloads list what is ticked
    value = parse_bool(raw)
    if value is None and isinstance(raw, str):
        # The words the renderers show ("Yes" / "是") count too.
        word = fold(raw)
        value = (
            True
            if word == fold(ui_text("yes", locale))
            else False
            if word == fold(ui_text("no", locale))
            else None
        )
    return (value, None) if value is not None else (None, ui_text("err_yes_no", locale))


def _number(raw: Any, locale: Locale) -> tuple[Any, str | None]:
    error = ui_text("err_number", locale)
    if raw is None:
        return BLANK, None
    if isinstance(raw, bool):
        return None, error
    if isinstance(raw, int):
        return raw, None
    if isinstance(raw, float):
        if not math.isfinite(raw):
            return None, error
        return (int(raw), None) if raw.is_integer() else (raw, None)
    if not isinstance(raw, str):
        return None, error
    text = unicodedata.normalize("NFKC", raw).strip().replace(" ", "")
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    try:
        if _INTEGER.fullmatch(text):
            return int(text), None
        number = float(text)
    except ValueError:  # includes digit strings too long for int()
        return None, error
    return _number(number, locale) if math.isfinite(number) else (None, error)


def _date(raw: Any, locale: Locale) -> tuple[Any, str | None]:
    error = ui_text("err_date", locale)
    if raw is None:
        return BLANK, None
    if isinstance(raw, dt.datetime):
        return raw.date().isoformat(), None
    if isinstance(raw, dt.date):
        return raw.isoformat(), None
    if not isinstance(raw, str):
        return None, error
    text = unicodedata.normalize("NFKC", raw).strip()
    # "2026-12-01", "2026/12/1", "2026年12月1日", "2026-12-01 +0800", "2026-12-01T09:00Z"
    match = _DATE_PREFIX.match(text)
    if match is None:
        try:
            return dt.datetime.fromisoformat(text).date().isoformat(), None
        except ValueError:
            return None, error
    year, month, day = (int(part) for part in match.groups())
    try:
        return dt.date(year, month, day).isoformat(), None
    except ValueError:  # the right form, but no such day (2026-02-30) or month (2026-13-01)
        return None, ui_text("err_no_such_date", locale, value=match.group(0).strip())


def find_option(options: list[Option], raw: Any) -> Option | None:
    """The option named by ``raw``: its label or value (case/width-insensitive), id, or number.

    Labels win over numbers, so "3" picks an option labelled "3" before the third option.
    """
    if isinstance(raw, Mapping):  # e.g. {"value": ..., "text": ...} straight from a platform
        raw = raw.get("value", raw.get("id"))
    text = scalar_text(raw)
    if text is None or isinstance(raw, bool):
        return None
    key = fold(text)
    for option in options:
        if key in (fold(option.label), fold(option.value)):
            return option
    capitals = fold_capitals(text)  # "ILIK" for "ılık"
    for option in options:
        if capitals in (fold_capitals(option.label), fold_capitals(option.value)):
            return option
    for option in options:
        if option.id == text:
            return option
    if loose := _loose_option(options, key):
        return loose
    if match := _INDEX.fullmatch(key):
        number = int(match.group(1))
        if 1 <= number <= len(options):
            return options[number - 1]
    return None


def _loose_option(options: list[Option], key: str) -> Option | None:
    """The one option ``key`` names once trailing marks are set aside on both sides
    ("PostgreSQL." or "postgresql!" for "PostgreSQL"); ``None`` when none does, or several."""
    bare = key.rstrip(_TRAILING_MARKS)
    if not bare or bare.isdigit():  # "2." is the second option, not a label "2"
        return None
    found = [o for o in options if bare in (_bare(o.label), _bare(o.value))]
    return found[0] if len(found) == 1 else None


def _bare(text: str) -> str:
    return fold(text).rstrip(_TRAILING_MARKS)


def _select(options: list[Option], raw: Any, locale: Locale) -> tuple[Any, str | None]:
    if raw is None:
        return BLANK, None
    option = find_option(options, raw)
    if option is None:
        return None, ui_text("err_choose_one", locale, choices=joined((o.label for o in options), locale))
    return option.value, None


def _multi_select(options: list[Option], raw: Any, locale: Locale) -> tuple[Any, str | None]:
    items = list(raw) if isinstance(raw, (list, tuple)) else [raw]
    if len(items) == 1 and isinstance(items[0], str):
        choices = _split_choices(options, items[0])
        if choices is None and _NUMBERS.fullmatch(items[0]):
            choices = items[0].split()  # "1 3": option numbers, as the terminal shows them
        items = choices if choices is not None else items  # None: let the whole text fail below
    values: list[str] = []
    for item in items:
        if item is None or (isinstance(item, str) and not clean(item)):
            continue
        option = find_option(options, item)
        if option is None:
            return None, ui_text(
                "err_choose_from", locale, choices=joined((o.label for o in options), locale)
            )
        if option.value not in values:
            values.append(option.value)
    order = [option.value for option in options]  # as every platform gives choices back
    values.sort(key=order.index)
    return (values, None) if values else (BLANK, None)


def _split_choices(options: list[Option], text: str) -> list[str] | None:
    """The choices named in "React, Vue" or "React、Vue"; ``None`` if a piece names no option.

    A label may itself hold separators ("Yes, with tests", even ";"), so at each
    point the longest run of pieces and separators that names an option wins.
    """
    parts = _LIST_SEPARATORS.split(text)  # piece, separator, piece, …
    chosen: list[str] = []
    start = 0
    while start < len(parts):
        for end in range(len(parts), start, -1):
            candidate = "".join(parts[start:end])
            if clean(candidate) and _names(options, parts[start:end]):
                chosen.append(candidate)
                start = end + end % 2  # the separator after a choice only separates
                break
        else:
            if start % 2 == 0 and clean(parts[start]):
                return None  # a piece that names nothing
            start += 1  # a separator or blank between choices
    return chosen


def _names(options: list[Option], run: list[str]) -> bool:
    """True when ``run`` (pieces and separators) names an option, and not by setting aside as
    trailing marks a piece after it that is a choice itself ("<, :" names "<" loosely, but ":" is
    an option of its own; "B, ." names "B")."""
    option = find_option(options, "".join(run))
    if option is None:
        return False
    ends = (k for k in range(1, len(run), 2) if find_option(options, "".join(run[:k])) == option)
    named = next(ends, len(run))  # the pieces up to here name it already
    return all(find_option(options, piece) is None for piece in run[named + 1 :: 2])


def _text(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, (list, tuple)):
        raw = ", ".join(text for item in raw if (text := scalar_text(item)))
    text = scalar_text(raw)
    return (text, None) if text else (BLANK, None)
