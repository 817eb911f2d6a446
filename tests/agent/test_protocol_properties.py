"""Properties: any arguments normalize within limits; the reply parser keeps its promises."""

import datetime as dt
import json
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clarigate.agent.protocol import (
    MAX_FIELDS,
    MAX_OPTIONS,
    MAX_SERIALIZED_BYTES,
    MAX_STRING,
    HumanInputRequest,
    check_form_values,
    normalize_request,
    parse_typed_reply,
)
from clarigate.agent.protocol.coerce import fold

SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any unicode, surrogates and control characters included: models emit them too.
anything_text = st.text(st.characters(exclude_categories=()), max_size=260)
junk = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | anything_text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(anything_text, inner, max_size=5),
    max_leaves=20,
)
words = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=230)
option_entry = words | st.fixed_dictionaries({"label": words}, optional={"value": words}) | st.integers()
options_arg = st.lists(option_entry, max_size=30)
field_type = st.sampled_from(
    [
        "text",
        "textarea",
        "number",
        "select",
        "multi_select",
        "checkbox",
        "date",
        "boolean",
        "weird",
        "integer",
    ]
)
field_arg = st.fixed_dictionaries(
    {},
    optional={
        "name": words,
        "label": words,
        "type": field_type,
        "required": st.sampled_from([True, False, "true", "false", "yes", "no", None, 1]),
        "options": options_arg | options_arg.map(json.dumps),
        "placeholder": words,
    },
)
structured_args = st.fixed_dictionaries(
    {},
    optional={
        "question": words | junk,
        "context": words | st.none(),
        "clarification_type": st.sampled_from(
            [
                "missing_info",
                "ambiguous_requirement",
                "approach_choice",
                "risk_confirmation",
                "suggestion",
                "x",
            ]
        ),
        "options": options_arg | options_arg.map(json.dumps) | junk,
        "fields": st.lists(field_arg, max_size=20) | st.lists(field_arg, max_size=20).map(json.dumps) | junk,
    },
)
any_args = structured_args | junk | st.dictionaries(anything_text, junk, max_size=6)


def all_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from all_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from all_strings(item)


@SETTINGS
@given(any_args)
def test_any_arguments_normalize_within_limits(args):
    req = normalize_request(args, "call_1")
    artifact = req.to_artifact()
    assert len(req.fields) <= MAX_FIELDS and len(req.options) <= MAX_OPTIONS
    assert all(len(f.options) <= MAX_OPTIONS for f in req.fields)
    assert all(len(s) <= MAX_STRING for s in all_strings(artifact))
    assert len(json.dumps(artifact)) <= MAX_SERIALIZED_BYTES
    assert len(req.model_dump_json().encode("utf-8")) <= MAX_SERIALIZED_BYTES
    assert HumanInputRequest.model_validate_json(req.model_dump_json()) == req
    assert HumanInputRequest.model_validate(json.loads(json.dumps(artifact))) == req
    assert req.question.strip()
    # The input mode says what is there, and names and choices can be told apart.
    assert req.input_mode == ("form" if req.fields else "choice_with_other" if req.options else "free_text")
    assert len({fold(f.name) for f in req.fields}) == len(req.fields)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", f.name) for f in req.fields)
    for choices in [req.options] + [f.options for f in req.fields]:
        keys = [fold(o.label) for o in choices]
        assert len(set(keys)) == len(keys) and all(keys)


choice_requests = st.builds(
    lambda question, options: normalize_request({"question": question, "options": options}, "c"),
    words,
    st.lists(option_entry, min_size=1, max_size=30),
).filter(lambda req: req.input_mode == "choice_with_other")


@SETTINGS
@given(structured_args, anything_text)
def test_the_reply_parser_never_raises_and_answers_or_explains(args, text):
    req = normalize_request(args, "c")
    reply = parse_typed_reply(req, text, None)
    assert (reply.response is None) != (reply.problems == [])
    if reply.response is not None:
        assert reply.response.request_id == req.request_id


@SETTINGS
@given(choice_requests, st.data())
def test_a_number_in_range_picks_that_option(req, data):
    number = data.draw(st.integers(1, len(req.options)))
    # A label that is itself this number wins (tested elsewhere); keep those out.
    assume(all(str(number) not in (fold(o.label), fold(o.value)) for o in req.options))
    reply = parse_typed_reply(req, str(number), None)
    assert reply.response is not None and reply.response.option_id == f"option-{number}"


@SETTINGS
@given(choice_requests, st.data())
def test_an_option_label_picks_that_option(req, data):
    option = data.draw(st.sampled_from(req.options))
    typed = data.draw(st.sampled_from([option.label, option.label.upper(), f"  {option.label} "]))
    reply = parse_typed_reply(req, typed, None)
    assert reply.response is not None
    assert reply.response.response_kind == "option" and reply.response.option_id == option.id


line_text = st.text(
    st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60
).filter(lambda s: s.strip())
form_requests = st.builds(
    lambda fields: normalize_request({"question": "Fill in", "fields": fields}, "c"),
    st.lists(field_arg, min_size=1, max_size=8),
).filter(lambda req: req.input_mode == "form")


def typed_value(draw, field):
    """A string a person could type for this field, and the typed value it should give."""
    if field.type == "number":
        number = draw(
            st.integers(-(10**12), 10**12) | st.floats(-1e9, 1e9, allow_nan=False).map(lambda f: round(f, 3))
        )
        return str(number), (int(number) if float(number).is_integer() else number)
    if field.type == "checkbox":
        word = draw(st.sampled_from(["yes", "no", "True", "false", "是", "否", "1", "0"]))
        return word, word.lower() in ("yes", "true", "是", "1")
    if field.type == "date":
        day = draw(st.dates(dt.date(1900, 1, 1), dt.date(2200, 12, 31)))
        shown = draw(st.sampled_from([day.isoformat(), f"{day.year}/{day.month}/{day.day}"]))
        return shown, day.isoformat()
    if field.type == "select":
        option = draw(st.sampled_from(field.options))
        return draw(st.sampled_from([option.label, option.value, option.id])), option.value
    if field.type == "multi_select":
        chosen = draw(st.lists(st.sampled_from(field.options), min_size=1, unique_by=lambda o: o.id))
        # Labels holding a separator ("a, b") make a joined list ambiguous; ids never do.
        ambiguous = any(re.search(r"[,，;；、]", o.label) for o in field.options)
        picked = {o.id for o in chosen}  # given back in the options' order, whatever the typed one
        return ", ".join(o.id if ambiguous else o.label for o in chosen), list(
            dict.fromkeys(o.value for o in field.options if o.id in picked)
        )
    text = draw(line_text)
    return text, None  # text is checked by check_form_values below


@SETTINGS
@given(form_requests, st.data())
def test_a_complete_valid_form_reply_gives_values_that_pass_the_check(req, data):
    lines, expected = [], {}
    for field in req.fields:
        if not field.required and data.draw(st.booleans()):
            continue
        shown, value = typed_value(data.draw, field)
        lines.append(f"{field.name}: {shown}")
        if value is not None:
            expected[field.name] = value
    assume(lines)
    reply = parse_typed_reply(req, "\n".join(lines), None)
    assert reply.problems == [] and reply.response is not None
    values = reply.response.values
    check = check_form_values(req, values)
    assert check.ok and check.values == values
    assert {name: values[name] for name in expected} == expected
