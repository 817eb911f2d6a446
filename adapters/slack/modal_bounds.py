"""A form field's bounds (``FormField.bounds``) as its modal input's own (pure functions, no I/O):
``number_input``'s ``min_value`` / ``max_value`` and ``plain_text_input``'s ``min_length`` /
``max_length``, which Slack checks as the person types and submits, so they are told under the
field at once; a whole-number field (an ``integer`` property's, ``multipleOf`` 1) takes no decimals,
and its exclusive bounds are inclusive ones (more than 0 is at least 1). What Slack cannot say is
left to the submit's check (``modals.out_of_bounds``): a decimal input's exclusive bound, a
required length on an optional input (left empty it is no answer, not a short one), a length past
Slack's 3,000 (its own cap), and any bound the value shown already breaks (the input shows it, and
the submit says what is wrong).
"""

from __future__ import annotations

import math
from typing import Any

from clarigate.agent.protocol import FormField, number_text
from clarigate.agent.protocol.bounds import is_whole

#: ``plain_text_input``'s ``min_length`` (0 to 3,000) and ``max_length`` (1 to 3,000) at most.
LENGTH_LIMIT = 3000


def whole_input(field: FormField, shown: Any) -> bool:
    """True when the number input takes whole numbers only (``is_decimal_allowed`` false): a
    whole-number field showing no fraction (one asked again shows what was refused, as given)."""
    number = _finite(shown)
    return is_whole(field) and (number is None or float(number).is_integer())


def number_shown(field: FormField, shown: Any) -> str | None:
    """``initial_value``: the number shown as typed, a whole input's without a decimal point
    (3.0 reads ``3``, as Slack takes no decimal in it); None for anything but a number."""
    number = _finite(shown)
    if number is not None and whole_input(field, number):
        return number_text(int(number))
    return number_text(shown)


def number_range(field: FormField, shown: Any) -> tuple[str | None, str | None]:
    """``min_value`` / ``max_value`` (strings, as Slack takes them) from the field's ``minimum`` /
    ``maximum`` (a whole input's: whole, with its exclusive bounds); neither when they cross or the
    number shown is outside them."""
    bounds = field.bounds or {}
    low, high = _finite(bounds.get("minimum")), _finite(bounds.get("maximum"))
    if whole_input(field, shown):
        low, high = _whole_range(
            low, high, _finite(bounds.get("exclusiveMinimum")), _finite(bounds.get("exclusiveMaximum"))
        )
    if low is not None and high is not None and low > high:
        return None, None
    number = _finite(shown)
    if number is not None and ((low is not None and number < low) or (high is not None and number > high)):
        return None, None
    return number_text(low), number_text(high)


def _whole_range(
    low: float | None, high: float | None, above: float | None, below: float | None
) -> tuple[int | None, int | None]:
    """The whole numbers' inclusive range: at least ``low`` and more than ``above`` (more than 0 is
    at least 1), at most ``high`` and less than ``below``."""
    lows = [math.ceil(low)] if low is not None else []
    lows += [math.floor(above) + 1] if above is not None else []
    highs = [math.floor(high)] if high is not None else []
    highs += [math.ceil(below) - 1] if below is not None else []
    return (max(lows) if lows else None), (min(highs) if highs else None)


def text_length(field: FormField, shown: str | None) -> tuple[int | None, int | None]:
    """``min_length`` (a required field's) / ``max_length`` from the field's ``minLength`` /
    ``maxLength``, within Slack's limits; neither when they cross or the text shown is outside them."""
    bounds = field.bounds or {}
    low, high = _whole(bounds.get("minLength")), _whole(bounds.get("maxLength"))
    low = low if field.required and low is not None and 0 < low <= LENGTH_LIMIT else None
    high = high if high is not None and 1 <= high <= LENGTH_LIMIT else None
    if low is not None and high is not None and low > high:
        return None, None
    size = len(shown or "")
    if shown and ((low is not None and size < low) or (high is not None and size > high)):
        return None, None
    return low, high


def _finite(value: Any) -> int | float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def _whole(value: Any) -> int | None:
    """A length as a whole number of characters (``maxLength`` 8.0 is 8); None otherwise."""
    number = _finite(value)
    return int(number) if number is not None and float(number).is_integer() else None
