"""The answer as the agent's message carries it (``additional_kwargs["human_input_response"]``).

DeerFlow's parsers (its web client's ``parseHumanInputResponse``, its backend's
``read_human_input_response``) accept only ``version: 1`` with ``response_kind`` ``option`` or
``text``. Our answers are version 2 with typed ``values`` and a ``declined`` kind, so the
message carries the version-1 view DeerFlow reads, made as DeerFlow's own client makes it (a
form is a ``text`` answer whose value is the summary and ``[values: {JSON}]``, a decline a
``text`` answer marked ``declined: true``), and the full version-2 answer under ``clarigate``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .models import HumanInputResponse

#: Key of the answer in ``HumanMessage.additional_kwargs`` (the protocol's answer).
HUMAN_INPUT_RESPONSE_KEY = "human_input_response"
#: Key of the full version-2 answer inside the wire payload.
FULL_KEY = "clarigate"


def wire_payload(response: HumanInputResponse) -> dict[str, Any]:
    """The version-1 view DeerFlow reads, with the version-2 answer under ``clarigate``."""
    full = response.to_payload()
    payload: dict[str, Any] = {
        "version": 1,
        "kind": "human_input_response",
        "source": response.source or "ask_clarification",
        "request_id": response.request_id,
        "response_kind": "option" if response.response_kind == "option" and response.option_id else "text",
        # blank to DeerFlow's client (JavaScript's trim also drops byte order marks): "-", as it sends
        "value": response.value.strip() if response.value.replace("\ufeff", "").strip() else "-",
    }
    if payload["response_kind"] == "option":
        payload["option_id"] = response.option_id
    if response.response_kind == "form" and response.values:
        # DeerFlow's form card: the readable summary, then the record keyed by field name
        record = json.dumps(response.values, ensure_ascii=False, separators=(",", ":"), default=str)
        payload["value"] += f" [values: {record}]"
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
