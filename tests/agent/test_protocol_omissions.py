"""What the protocol's limits leave out of a question is told to the model, never dropped silently."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import ToolMessage

from clarigate.agent.protocol import (
    MAX_FIELDS,
    MAX_OPTIONS,
    MAX_SERIALIZED_BYTES,
    answer_message_text,
    answer_with_form,
    normalize_request,
    normalize_with_omissions,
    render_text_fallback,
)

from .conftest import ask, scripted

# 16 dropdowns of 24 options each: far past 16 KB, as the issue measured it.
DROPDOWNS = [
    {"name": f"region_{i}", "type": "select", "options": [f"Region {i}-{j}: " + "x" * 40 for j in range(24)]}
    for i in range(16)
]


def _tool_result(messages: list[Any]) -> ToolMessage:
    return next(m for m in reversed(messages) if isinstance(m, ToolMessage))


async def test_the_model_reads_which_dropdowns_the_size_limit_left_out(make_agent: Any) -> None:
    model = scripted(
        {"content": "", "tool_calls": [ask("Where should each service run?", fields=DROPDOWNS)]},
        {"content": "Noted."},
    )
    agent = await make_agent(model)
    asked = await agent.run_turn("t1", "deploy everything")
    request = asked.request
    assert request is not None and 0 < len(request.fields) < len(DROPDOWNS)
    assert len(json.dumps(request.to_artifact())) <= MAX_SERIALIZED_BYTES
    left_out = [f["name"] for f in DROPDOWNS if request.field_by_name(f["name"]) is None]
    # the person sees the request as it is, without the note
    assert asked.fallback_text == render_text_fallback(request) and "Note:" not in asked.fallback_text

    values = {f.name: f.options[0].value for f in request.fields}
    response = answer_with_form(request, values, None)
    await agent.run_turn("t1", answer_message_text(request, response), response)

    seen = _tool_result(model.calls[1]).content
    assert "16 KB" in seen and f"{len(left_out)} fields" in seen
    assert all(f'"{name}"' in seen for name in left_out)
    assert not any(f'"{f.name}"' in seen for f in request.fields)  # only what is missing is named


def test_fields_and_options_past_the_count_limits_are_named() -> None:
    fields = [{"name": f"f{i}", "label": "L" * 200} for i in range(MAX_FIELDS + 2)]
    options = [f"choice {i}" for i in range(MAX_OPTIONS + 3)]
    request, omitted = normalize_with_omissions({"question": "Q", "fields": fields, "options": options}, "c")
    assert [f.name for f in request.fields] == [f"f{i}" for i in range(MAX_FIELDS)]
    note = "; ".join(omitted)
    assert '"f16", "f17"' in note and "2 fields past the first 16" in note
    assert '"choice 24", "choice 25", "choice 26"' in note
    assert "a form shows its fields" in note  # the question's own options are not shown with a form


def test_a_select_s_options_past_24_are_named_with_the_field() -> None:
    field = {"name": "db", "type": "select", "options": [f"db {i}" for i in range(30)]}
    request, omitted = normalize_with_omissions({"question": "Q", "fields": [field]}, "c")
    assert len(request.fields[0].options) == MAX_OPTIONS
    assert omitted == [
        '6 options of field `db` past the first 24: "db 24", "db 25", "db 26", "db 27", "db 28", "db 29"'
    ]


def test_a_question_that_fits_reports_nothing_and_reads_the_same() -> None:
    args = {"question": "Which?", "options": ["a", "b", "a"], "fields": None}
    request, omitted = normalize_with_omissions(args, "c")
    assert omitted == [] and request == normalize_request(args, "c")


def test_degraded_to_free_text_says_so() -> None:
    long_zh = ["选项" * 99 + str(i) for i in range(24)]
    fields = [{"name": "choice", "type": "select", "options": long_zh, "required": True}]
    request, omitted = normalize_with_omissions({"question": "选哪个？", "fields": fields}, "c")
    assert request.input_mode == "free_text"
    assert omitted[0].startswith('1 field, to keep the question under 16 KB: "choice"')
    assert "free text" in omitted[-1]
