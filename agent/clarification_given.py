"""A form's answer to ``ask_clarification`` with option values as the model wrote them.

A request holds each option's value as text of at most 200 characters (``Option.value``), so a
select whose option the model gave as ``{"label": "B", "value": "B:…250 characters…"}`` (or
``False``, or ``3``) is answered with the cut text. Before each model call the answer the model
reads is given its values as the model wrote them (``given_values.as_given``, as a graph's
interrupt is resumed): read again from the ``ask_clarification`` call in the thread, through the
same normalization. The stored thread keeps the answer as the person gave it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, ui_text
from clarigate.agent.protocol.given_values import as_given, normalize_with_given
from clarigate.agent.protocol.wire import response_from_kwargs, response_kwargs


def answers_as_given(messages: Sequence[Any]) -> list[Any] | None:
    """``messages`` with each form answer to an ``ask_clarification`` holding the option values
    as its call wrote them; ``None`` when no answer changes."""
    from clarigate.agent.middleware import asked_last, read_ask_arguments, request_in

    calls = {
        call["id"]: call
        for m in messages
        if isinstance(m, AIMessage)
        for call in [*m.tool_calls, *m.invalid_tool_calls]
        if call.get("id")
    }
    requests = {r.request_id: r for m in messages if (r := request_in(m)) is not None}
    out, changed = list(messages), False
    for index, message in enumerate(out):
        response = (
            response_from_kwargs(message.additional_kwargs) if isinstance(message, HumanMessage) else None
        )
        if response is None or response.response_kind != "form" or not response.values:
            continue
        request = requests.get(response.request_id)
        call = calls.get(request.tool_call_id) if request is not None else None
        if request is None or call is None:
            continue
        args = asked_last(read_ask_arguments(call)[0])[0]
        values = as_given(request, response.values, normalize_with_given(args, request.tool_call_id)[1])
        if values != response.values:
            out[index], changed = _with_values(message, request, response, values), True
    return out if changed else None


def _with_values(
    message: HumanMessage, request: HumanInputRequest, response: HumanInputResponse, values: dict[str, Any]
) -> HumanMessage:
    """``message`` with the answer's ``values`` replaced, in its text and its ``additional_kwargs``."""
    content = message.content
    old, new = (json.dumps(v, ensure_ascii=False, sort_keys=False) for v in (response.values, values))
    if isinstance(content, str) and old in content:
        content = content.replace(old, new)
    elif isinstance(content, str):
        content += "\n" + ui_text("answer_values", request.locale, values=new)
    kwargs = {**message.additional_kwargs, **response_kwargs(response.model_copy(update={"values": values}))}
    return message.model_copy(update={"content": content, "additional_kwargs": kwargs})
