"""Option values as the asker wrote them.

A request holds an option's value as text (``Option.value``: clients read strings), so an option
given as ``{"label": "Off", "value": False}`` is ``"false"`` there. A graph's ``interrupt()`` that
wrote ``False`` (or ``3``, or a dict) must be resumed with that, not with its text: the original
value is read again from the interrupt's value at resume time (the checkpoint keeps it), through
the same normalization, so each option id finds the value it stood for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .models import HumanInputRequest
from .normalize import normalize_with_omissions


def normalize_with_given(
    args: Mapping[str, Any], tool_call_id: str
) -> tuple[HumanInputRequest, dict[str, Any]]:
    """``normalize_request``, and each option's value as ``args`` gave it, by option id
    (``option-N``, ``{field}-option-N``): the request holds values as text (``"false"``, ``"3"``);
    a graph that wrote ``False`` or ``3`` is resumed with that (``as_given``)."""
    given: dict[str, Any] = {}
    return normalize_with_omissions(args, tool_call_id, given)[0], given


def as_given(
    request: HumanInputRequest, values: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """A form answer's ``values`` with each select's and multi-select's option values as the
    request's arguments gave them (``normalize_with_given``)."""
    out = dict(values)
    for field in request.fields:
        ids = {option.value: option.id for option in field.options}
        if field.name in values and ids:
            picked = values[field.name]
            items = picked if isinstance(picked, list) else [picked]
            originals = [given.get(ids[v], v) if isinstance(v, str) and v in ids else v for v in items]
            out[field.name] = originals if isinstance(picked, list) else originals[0]
    return out
