"""A form field's bounds (a typed interrupt's schema: ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``minLength``, ``maxLength``, and ``multipleOf`` 1 for
an ``integer`` property: a whole number), and what a value outside them is told, in the catalog's
words (``err_at_least``, ``err_max_chars``, ``err_whole_number``, …).

The agent checks the whole answer against its schema (``clarigate.agent.schema_values``); a form
asked a field at a time (the terminal) checks each value as it is typed with the same words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import catalog
from .field_values import number_text
from .models import FormField, Locale

#: The schema's keys a form field carries (``FormField.bounds``).
BOUND_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength")
#: The bound a field that takes whole numbers only carries (an ``integer`` property's): ``{WHOLE: 1}``.
WHOLE = "multipleOf"


def bounds_of(spec: Mapping[str, Any], whole: bool = False) -> dict[str, int | float] | None:
    """The bounds a schema property sets (numbers only), with ``multipleOf`` 1 when its value is
    ``whole`` (an ``integer`` property), or None when there are none."""
    found = {key: spec[key] for key in BOUND_KEYS if _is_number(spec.get(key))}
    return {**found, WHOLE: 1} if whole else found or None


def is_whole(field: FormField) -> bool:
    """True when the field takes whole numbers only (its bounds' ``multipleOf`` is 1)."""
    return (field.bounds or {}).get(WHOLE) == 1


def range_error(spec: Mapping[str, Any], number: float, locale: Locale) -> str | None:
    """What is wrong with ``number`` for the range ``spec`` sets, or None."""
    if (low := _bound(spec, "minimum")) is not None and number < low:
        return catalog.text("err_at_least", locale, low=_number(low))
    if (high := _bound(spec, "maximum")) is not None and number > high:
        return catalog.text("err_at_most", locale, high=_number(high))
    if (low := _bound(spec, "exclusiveMinimum")) is not None and number <= low:
        return catalog.text("err_more_than", locale, low=_number(low))
    if (high := _bound(spec, "exclusiveMaximum")) is not None and number >= high:
        return catalog.text("err_less_than", locale, high=_number(high))
    return None


def length_error(spec: Mapping[str, Any], text: str, locale: Locale) -> str | None:
    """What is wrong with the length of ``text`` for ``spec``'s ``minLength``/``maxLength``, or None."""
    if (low := _bound(spec, "minLength")) is not None and len(text) < low:
        return catalog.text("err_min_chars", locale, low=_number(low))
    if (high := _bound(spec, "maxLength")) is not None and len(text) > high:
        return catalog.text("err_max_chars", locale, high=_number(high))
    return None


def bound_error(field: FormField, value: Any, locale: Locale) -> str | None:
    """What is wrong with a field's typed ``value`` for the field's bounds, or None (no bounds,
    no value, or a value within them)."""
    if not field.bounds or value is None:
        return None
    if _is_number(value):
        if is_whole(field) and not float(value).is_integer():
            return catalog.text("err_whole_number", locale)
        return range_error(field.bounds, value, locale)
    if isinstance(value, str):
        return length_error(field.bounds, value, locale)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bound(spec: Mapping[str, Any], key: str) -> int | float | None:
    value = spec.get(key)
    return value if _is_number(value) else None


def _number(value: Any) -> str:
    return number_text(value) or str(value)
