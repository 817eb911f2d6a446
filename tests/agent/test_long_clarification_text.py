"""Options, questions and labels past 200 characters on the ``ask_clarification`` path: distinct
options stay distinct, what is cut or merged is told to the model, and a form's answer carries
the values the model wrote."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from clarigate.agent.middleware import above_in, answer_clarification
from clarigate.agent.protocol import (
    MAX_OPTIONS,
    MAX_STRING,
    answer_message_text,
    answer_with_form,
    normalize_with_omissions,
)
from clarigate.agent.protocol.coerce import fold

from .conftest import ask, scripted

DEEP = "s3://bucket/" + "deep/" * 50
FILES = [
    {"label": "File A", "value": DEEP + "file-A.parquet"},
    {"label": "File B", "value": DEEP + "file-B.parquet"},
]


def _asked(args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(the request's artifact as the person gets it, the tool result the model reads)."""
    message = AIMessage(content="", tool_calls=[{"name": "ask_clarification", "id": "c1", "args": args}])
    result = (answer_clarification(message) or [])[-1]
    assert isinstance(result, ToolMessage)
    return result.artifact["human_input"], str(result.content)


def test_options_differing_past_200_characters_stay_distinct() -> None:
    request, _ = normalize_with_omissions({"question": "Which file?", "options": FILES}, "c1")
    assert [o.label for o in request.options] == ["File A", "File B"]
    values = [o.value for o in request.options]
    assert len(set(values)) == 2 and all(len(v) <= MAX_STRING for v in values)
    assert values[1].endswith("file-B.parquet")


def test_long_labels_differing_at_the_end_are_all_shown_told_apart() -> None:
    labels = ["a" * 250 + str(i) for i in range(7)]
    human_input, seen = _asked({"question": "Which?", "options": labels})
    shown = [o["label"] for o in human_input["options"]]
    assert len(shown) == 7 and len({fold(s) for s in shown}) == 7
    assert all(len(s) <= MAX_STRING and s.endswith(str(i)) for i, s in enumerate(shown))
    assert "7 option labels" in seen and "longer than 200 characters" in seen


def test_select_options_differing_past_200_characters_stay_distinct() -> None:
    field = {"name": "s", "type": "select", "options": FILES}
    request, _ = normalize_with_omissions({"question": "Which file?", "fields": [field]}, "c1")
    assert [o.label for o in request.fields[0].options] == ["File A", "File B"]


def _above(args: dict[str, Any]) -> str | None:
    message = AIMessage(content="", tool_calls=[{"name": "ask_clarification", "id": "c1", "args": args}])
    return above_in((answer_clarification(message) or [])[-1])


def test_a_long_question_without_a_short_last_sentence_is_shown_in_full_above() -> None:
    question = "Q " + "word " * 1000 + "FINAL PART?"
    human_input, seen = _asked({"question": question, "context": "ctx"})
    assert human_input["question"] == "What is your answer to the text above?"
    assert human_input["context"] == "Shown in full above."
    above = _above({"question": question, "context": "ctx"})
    assert above is not None and question in above and "ctx" in above  # nothing cut away unseen
    assert "right above the question" in seen and "was not shown" not in seen
    assert question in seen  # a client showing the tool's text alone shows it all


def test_a_long_question_with_a_last_sentence_asks_that_sentence() -> None:
    human_input, seen = _asked({"question": "Background. " * 20 + "Which region should it run in?"})
    assert human_input["question"].endswith("Which region should it run in?")
    assert human_input["context"].startswith("Background.")
    assert "last sentences" in seen
    assert _above({"question": "Background. " * 20 + "Which region?"}) is None


def test_a_long_lead_in_is_shown_in_full_above_its_last_sentence() -> None:
    args = {"question": "Background. " * 40 + "Which region should it run in?", "context": "Ctx."}
    human_input, seen = _asked(args)
    assert human_input["question"].endswith(". Which region should it run in?")
    assert human_input["context"] == "Shown in full above."
    above = _above(args)
    assert above is not None and "Background. " * 20 in above and "Ctx." in above
    assert "right above the question" in seen


def test_a_long_context_is_shown_in_full_above_and_reported() -> None:
    field = {"name": "f", "label": "L" * 3000, "placeholder": "p" * 300}
    human_input, seen = _asked({"question": "Q?", "context": "c" * 900, "fields": [field]})
    assert human_input["question"] == "Q?" and human_input["context"] == "Shown in full above."
    assert "c" * 900 in (_above({"question": "Q?", "context": "c" * 900}) or "")
    assert "right above the question" in seen
    assert "the label of field `f` is 3000 characters" in seen
    assert "the placeholder of field `f` is 300 characters" in seen


async def test_the_turn_shows_the_full_text_right_above_its_question(make_agent: Any) -> None:
    long_context = "Step one of the plan. " * 30
    model = scripted({"content": "", "tool_calls": [ask("Go ahead?", context=long_context)]})
    agent = await make_agent(model)
    output = await agent.run_turn("t1", "go")
    assert output.request is not None and output.request.question == "Go ahead?"
    assert output.replies and long_context.strip() in output.replies[-1]
    assert output.shown_above == output.replies[-1]
    again = await agent.pending_asked("t1")  # asked again later: with the same text above
    assert again is not None and again.in_full == output.shown_above


def test_options_with_one_label_are_merged_and_the_model_is_told() -> None:
    options = [{"label": "Same", "value": f"v{i}"} for i in range(10)]
    human_input, seen = _asked({"question": "Which?", "options": options})
    assert len(human_input["options"]) == 1
    assert "9 options of the question repeating an earlier option's label or value" in seen


def test_a_multi_select_default_keeps_its_valid_entries() -> None:
    field = {"name": "m", "type": "multi_select", "options": ["a", "b"], "default": ["a", "nope"]}
    request, omitted = normalize_with_omissions({"question": "Q?", "fields": [field]}, "c1")
    assert request.fields[0].default == ["a"]
    assert any('"nope"' in note and "`m`" in note for note in omitted)


async def test_a_select_answer_carries_the_value_the_model_wrote(make_agent: Any) -> None:
    options = [{"label": "A", "value": "A:" + "x" * 250}, {"label": "B", "value": "B:" + "x" * 250}]
    model = scripted(
        {
            "content": "",
            "tool_calls": [ask("Which one?", fields=[{"name": "s", "type": "select", "options": options}])],
        },
        {"content": "Noted."},
    )
    agent = await make_agent(model)
    request = (await agent.run_turn("t1", "go")).request
    assert request is not None
    response = answer_with_form(request, {"s": request.fields[0].options[1].value}, None)
    await agent.run_turn("t1", answer_message_text(request, response), response)
    answer = next(m for m in reversed(model.calls[1]) if isinstance(m, HumanMessage))
    assert '"B:' + "x" * 250 + '"' in str(answer.content)
    assert answer.additional_kwargs["human_input_response"]["clarigate"]["values"] == {"s": "B:" + "x" * 250}


long_texts = st.lists(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40).map(
        lambda tail: "p" * 210 + tail
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_texts)
def test_distinct_options_past_the_limit_are_kept_or_named(labels: list[str]) -> None:
    request, omitted = normalize_with_omissions({"question": "Which?", "options": labels}, "c1")
    distinct = {fold(label) for label in labels}
    shown = [o.label for o in request.options]
    assert len(shown) == min(len(distinct), MAX_OPTIONS)
    assert len({fold(s) for s in shown}) == len(shown) and all(len(s) <= MAX_STRING for s in shown)
    assert len({fold(o.value) for o in request.options}) == len(shown)
    if len(distinct) > len(shown):  # something other than an exact repeat left out: named
        assert any("merged" in note or "past the first" in note for note in omitted)
