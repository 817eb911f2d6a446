"""DeerFlow's own parsers accept every request and answer clarigate emits, and read them as meant.

DeerFlow's web client parser (``human-input.ts``, compiled here with TypeScript) and its
backend's answer reader (``human_input.py``) are vendored unmodified in ``tests/agent/deerflow``
with the commit they come from. Requests are the ToolMessages clarigate's middleware writes,
answers the HumanMessages that carry them back, both as a LangGraph server sends them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from clarigate.agent.interrupts import Action, approval_request, edit_request, request_for
from clarigate.agent.middleware import clarification_tool_message
from clarigate.agent.protocol import (
    AnsweredBy,
    DeclineReason,
    FormField,
    HumanInputRequest,
    HumanInputResponse,
    answer_declined,
    answer_message_text,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    normalize_request,
)
from clarigate.agent.protocol.wire import response_kwargs

from .conftest import ask, scripted
from .deerflow_parser import TypeScriptParser, install_typescript, python_parser
from .test_protocol_properties import any_args

FIELD_TYPES = ["text", "textarea", "number", "select", "multi_select", "checkbox", "date"]
CHOICES = [{"label": "React", "value": "react"}, {"label": "Vue", "value": "vue"}, "Svelte"]
BY = AnsweredBy(platform="slack", user_id="U1", display_name="Ann")


@pytest.fixture(scope="module")
def deerflow() -> Iterator[TypeScriptParser]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: DeerFlow's TypeScript parser cannot run")
    install_typescript()
    parser = TypeScriptParser(node)
    assert {"extractHumanInputRequest", "extractHumanInputResponse"} <= set(parser.exports)
    yield parser
    parser.close()


def field_spec(field_type: str, name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name or f"a_{field_type}", "type": field_type, "required": True}
    if field_type in ("select", "multi_select"):
        spec["options"] = CHOICES
    return spec


def asked(**args: Any) -> HumanInputRequest:
    return normalize_request({"question": "Which one?", **args}, "call_1")


def every_request() -> dict[str, HumanInputRequest]:
    """A request of every mode, every field type alone and together, and the interrupts' ones."""
    cases = {
        "free_text": asked(),
        "free_text_zh_context": normalize_request({"question": "截止日期？", "context": "计划"}, "c2"),
        "choice": asked(options=CHOICES, clarification_type="approach_choice"),
        "confirmation": asked(options=["Delete it"], clarification_type="risk_confirmation"),
        "malformed_call": normalize_request('{"question": "Cut off', "c3"),  # type: ignore[arg-type]
        "too_many_fields": asked(fields=[field_spec("text", f"f{n}") for n in range(40)]),
        "too_large": asked(options=[f"{n} " + "x" * 190 for n in range(24)] * 5),
        "every_type": asked(fields=[field_spec(t) for t in FIELD_TYPES]),
        "defaults_and_placeholders": asked(
            fields=[
                {"name": "n", "type": "number", "default": 3, "placeholder": "How many"},
                {"name": "c", "type": "checkbox", "default": True},
                {"name": "d", "type": "date", "default": "2026-01-02"},
                {**field_spec("multi_select", "m"), "default": ["react", "Svelte"], "required": False},
            ]
        ),
        "reserved_names": asked(
            fields=[field_spec("text", n) for n in ("constructor", "toString", "__proto__")]
        ),
        "byte_order_marks": asked(question="\ufeffWhich?", options=["\ufeff", "\ufeffA"]),
        "interrupt_text": request_for("i1", "Go ahead?"),
        "interrupt_human_input": request_for("i2", {"question": "Size?", "fields": [field_spec("number")]}),
        "approval": approval_request(
            "i3", [Action("drop_table", {"table": "users"}, ("approve", "edit"))], "en"
        ),
        "approval_edit": edit_request(
            "i4", [Action("send", {"to": "a@b.c", "count": 2, "now": True, "valueOf": "x"}, ("edit",))], "en"
        ),
    }
    cases |= {f"form_{t}": asked(fields=[field_spec(t)]) for t in FIELD_TYPES}
    return cases


REQUESTS = every_request()
BACKEND = python_parser()


def raw_value(form_field: FormField) -> Any:
    """A valid raw value for the field, as a platform hands it over."""
    if form_field.type == "select":
        return form_field.options[-1].id
    if form_field.type == "multi_select":
        return [o.id for o in form_field.options[:2]]
    return {"number": "3", "checkbox": "yes", "date": "2026-01-02", "textarea": "a\nb"}.get(
        form_field.type, "x"
    )


def every_answer(request: HumanInputRequest) -> list[HumanInputResponse]:
    """Every answer a person can give to ``request``."""
    answers = [
        answer_with_text(request, "Whatever you think", BY),
        answer_with_text(request, " \ufeff ", None),
    ]
    answers += [answer_with_option(request, option.id, BY) for option in request.options]
    if request.fields:
        answers.append(answer_with_form(request, {f.name: raw_value(f) for f in request.fields}, BY))
        required_only = {f.name: raw_value(f) for f in request.fields if f.required}
        answers.append(answer_with_form(request, required_only, None))
    reasons = get_args(DeclineReason)
    return answers + [answer_declined(request, BY, reason) for reason in reasons]


def request_message(request: HumanInputRequest) -> dict[str, Any]:
    return clarification_tool_message(request).model_dump()


def answer_message(request: HumanInputRequest, response: HumanInputResponse) -> dict[str, Any]:
    text = answer_message_text(request, response)
    return HumanMessage(content=text, additional_kwargs=response_kwargs(response)).model_dump()


def assert_read_as_meant(parsed: dict[str, Any] | None, request: HumanInputRequest) -> None:
    assert parsed is not None, f"DeerFlow refuses {request.to_artifact()}"
    assert parsed["version"] == (2 if request.input_mode == "form" else 1)
    assert parsed["input_mode"] == request.input_mode
    assert (parsed["request_id"], parsed["question"]) == (request.request_id, request.question)
    assert [o["id"] for o in parsed.get("options", [])] == [o.id for o in request.options]
    shown = [(f["name"], f["type"], f["required"]) for f in parsed.get("fields", [])]
    assert shown == [(f.name, f.type, f.required) for f in request.fields]
    for field, form_field in zip(parsed.get("fields", []), request.fields, strict=True):
        assert [o["value"] for o in field.get("options", [])] == [o.value for o in form_field.options]


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_deerflow_reads_every_request_and_answer(deerflow: TypeScriptParser, case: str) -> None:
    request = REQUESTS[case]
    asking = request_message(request)
    assert_read_as_meant(deerflow.request(asking), request)
    for response in every_answer(request):
        answer = answer_message(request, response)
        parsed = deerflow.response(answer)
        assert parsed is not None, f"DeerFlow's client refuses {answer['additional_kwargs']}"
        assert (parsed["request_id"], parsed["source"]) == (request.request_id, request.source)
        assert parsed["response_kind"] == ("option" if response.response_kind == "option" else "text")
        if response.response_kind == "form":  # as DeerFlow's own form card words it
            assert parsed["value"].startswith(f"{response.value} [values: ")
            assert json.loads(parsed["value"].split(" [values: ", 1)[1][:-1]) == response.values
        backend = BACKEND.read_human_input_response(answer["additional_kwargs"])
        assert backend == parsed, "DeerFlow's backend reads the answer as its client does"
        # the answer closes the question in DeerFlow's thread view
        calling = AIMessage(content="", tool_calls=[{"name": "ask_clarification", "args": {}, "id": "x"}])
        assert deerflow.thread([calling.model_dump(), asking, answer]) == ([request.request_id], None)
    assert deerflow.thread([asking]) == ([], request.request_id)


@pytest.mark.parametrize("case", sorted(REQUESTS))
def test_deerflow_backend_reads_every_answer(case: str) -> None:
    """DeerFlow's backend reader is Python: it runs wherever the tests do, node or not."""
    request = REQUESTS[case]
    for response in every_answer(request):
        read = BACKEND.read_human_input_response(response_kwargs(response))
        assert read is not None, f"DeerFlow's backend refuses {response_kwargs(response)}"
        assert (read["request_id"], read["source"]) == (request.request_id, request.source)


def test_free_text_and_choice_carry_version_1_and_forms_version_2() -> None:
    assert REQUESTS["free_text"].to_artifact()["version"] == 1
    assert REQUESTS["choice"].to_artifact()["version"] == 1
    assert REQUESTS["every_type"].to_artifact()["version"] == 2
    # a stored request written before (version 2 whatever its mode) still reads
    stored = {**REQUESTS["choice"].to_artifact(), "version": 2}
    assert HumanInputRequest.model_validate(stored) == REQUESTS["choice"]


async def test_a_real_run_asks_and_hears_back_as_deerflow_reads(
    deerflow: TypeScriptParser, make_agent: Any
) -> None:
    fields = [field_spec(t) for t in FIELD_TYPES]
    agent = await make_agent(
        scripted({"content": "", "tool_calls": [ask(fields=fields)]}, {"content": "Done."})
    )
    out = await agent.run_turn("t1", "set it up")
    assert out.request is not None
    answer = answer_with_form(out.request, {f.name: raw_value(f) for f in out.request.fields}, BY)
    await agent.run_turn("t1", answer_message_text(out.request, answer), answer)

    history = [m.model_dump() for m in await agent.history("t1")]
    asking = next(m for m in history if m["type"] == "tool")
    assert_read_as_meant(deerflow.request(asking), out.request)
    assert deerflow.response(history[-2]) is not None
    assert deerflow.thread(history) == ([out.request.request_id], None)


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(args=any_args, reply=st.text(max_size=60))
def test_any_arguments_and_reply_are_accepted(deerflow: TypeScriptParser, args: Any, reply: str) -> None:
    request = normalize_request(args, "call_1")
    assert_read_as_meant(deerflow.request(request_message(request)), request)
    answer = answer_message(request, answer_with_text(request, reply, None))
    assert deerflow.response(answer) is not None
