"""The answer as the agent's message carries it (``additional_kwargs["human_input_response"]``).

DeerFlow's parser (``deerflow.agents.human_input.read_human_input_response``) accepts only
``version: 1`` with ``response_kind`` ``option`` or ``text`` (a form's values in
``form_values``: str, finite numbers, bools, non-empty lists of strings). Our answers are
version 2 with typed ``values`` and a ``declined`` kind, so the message carries a
version-1 view DeerFlow reads (forms as ``text`` plus ``form_values``, a decline as ``text``
plus ``declined: true``) and the full version-2 answer under ``clarigate``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .models import HumanInputResponse

#: Key of the answer in ``HumanMessage.additional_kwargs`` (the protocol's answer).
HUMAN_INPUT_RESPONSE_KEY = "human_input_response"
#: Key of the full version-2 answer inside the wire payload.
FULL_KEY = "clarigate"


def _form_value(value: Any) -> Any:
    """A value DeerFlow's ``form_values`` accepts, or None to leave it out."""
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        items = [str(v) for v in value if str(v).strip()]
        return items or None
    return None


def wire_payload(response: HumanInputResponse) -> dict[str, Any]:
    """The version-1 view DeerFlow reads, with the version-2 answer under ``clarigate``."""
    full = response.to_payload()
    payload: dict[str, Any] = {
        "version": 1,
        "kind": "human_input_response",
        "source": response.source or "ask_clarification",
        "request_id": response.request_id,
        "response_kind": "option" if response.response_kind == "option" and response.option_id else "text",
        "value": response.value.strip() or "-",
    }
    if payload["response_kind"] == "option":
        payload["option_id"] = response.option_id
    if response.response_kind == "form" and response.values:
        values = {k: v for k, v in ((k, _form_value(v)) for k, v in response.values.items()) if v is not None}
        if values:
            payload["form_values"] = values
    if response.response_kind == "declined":
        payload["declined"] = True
    payload[FULL_KEY] = full
    return payload


def response_kwargs(response: HumanInputResponse) -> dict[str, Any]:
    """``additional_kwargs`` for the message that carries ``response``."""
    return {HUMAN_INPUT_RESPONSE_KEY: wire_payload(response)}


def response_from_kwargs(kwargs: Mapping[str, Any]) -> HumanInputResponse | None:
    """The version-2 answer a message carries (either layout), or None."""
    raw = kwargs.get(HUMAN_INPUT_RESPONSE_KEY)
    if not isinstance(raw, Mapping):
        return None
    full = raw.get(FULL_KEY) if isinstance(raw.get(FULL_KEY), Mapping) else raw
    try:
        return HumanInputResponse.model_validate(full)
    except ValueError:
        return None
