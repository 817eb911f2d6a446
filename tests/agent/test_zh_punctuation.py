"""Text a Chinese-writing person reads takes full-width punctuation (，：；（）) from the catalog,
and a JSON error says where it stopped in words both languages read; English is unchanged."""

from __future__ import annotations

from typing import Any

from clarigate.agent.interrupts import (
    APPROVAL_EDIT,
    AskAgain,
    actions_of,
    edit_request,
    request_for,
    resume_value,
)
from clarigate.agent.protocol import (
    HumanInputResponse,
    answer_with_form,
    answer_with_text,
    check_form_values,
    closed_line,
    normalize_request,
)

FIELDS = [
    {"name": "name", "label": "{name}"},
    {
        "name": "colors",
        "label": "{colors}",
        "type": "multi_select",
        "options": ["{red}", "{blue}", "{green}"],
    },
    {"name": "public", "label": "{public}", "type": "checkbox"},
]
WORDS = {
    "zh": {"name": "名称", "colors": "颜色", "public": "公开", "red": "红", "blue": "蓝", "green": "绿"},
    "en": {
        "name": "Name",
        "colors": "Colors",
        "public": "Public",
        "red": "Red",
        "blue": "Blue",
        "green": "Green",
    },
}


def _form(locale: str) -> Any:
    words = WORDS[locale]
    fields = [
        {
            k: (v.format(**words) if isinstance(v, str) else [o.format(**words) for o in v])
            for k, v in f.items()
        }
        for f in FIELDS
    ]
    question = "请填写您的资料" if locale == "zh" else "Please fill in your details"
    return normalize_request({"question": question, "fields": fields}, "call")


def _answered(locale: str, name: str) -> str:
    request = _form(locale)
    words = WORDS[locale]
    check = check_form_values(
        request, {"name": name, "colors": [words["red"], words["blue"]], "public": True}
    )
    assert check.ok, check.errors
    response: HumanInputResponse = answer_with_form(request, check.values, None)
    return closed_line(request, response, "Alice")


def test_the_answered_line_of_a_form_is_punctuated_in_its_language() -> None:
    assert _answered("zh", "小明") == "✅ Alice 已回答：名称：小明；颜色：红，蓝；公开：是"
    assert _answered("en", "Bob") == "✅ Answered by Alice: Name: Bob; Colors: Red, Blue; Public: yes"


def test_a_choice_refused_lists_its_options_in_the_persons_language() -> None:
    zh = check_form_values(_form("zh"), {"name": "x", "colors": ["紫"]})
    assert zh.errors == {"colors": "请从以下选项中选择：红，蓝，绿"}
    en = check_form_values(_form("en"), {"name": "x", "colors": ["Purple"]})
    assert en.errors == {"colors": "Choose from: Red, Blue, Green"}
    one = normalize_request(
        {"question": "选哪个？", "fields": [{"name": "c", "type": "select", "options": ["红", "蓝"]}]}, "c"
    )
    assert check_form_values(one, {"c": "紫"}).errors == {"c": "请从以下选项中选择一个：红，蓝"}


SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "b": {"type": "string"},
    },
    "required": ["a", "b"],
}


def test_json_that_does_not_parse_says_where_not_pythons_english() -> None:
    request = request_for("i1", "请填写", schema=SCHEMA)
    again = resume_value(
        "interrupt",
        "i1",
        "请填写",
        answer_with_text(request, '{"b": "小明",\n "a": }', None),
        schema=SCHEMA,
        locale="zh",
    )
    assert isinstance(again, AskAgain)
    assert (again.request.context or "").startswith("不是有效的 JSON（第 2 行第 7 列）。请用 JSON 回复。")
    request = request_for("i2", "Fill it in", schema=SCHEMA)
    again = resume_value(
        "interrupt", "i2", "Fill it in", answer_with_text(request, "{nope", None), schema=SCHEMA
    )
    assert isinstance(again, AskAgain)
    assert (again.request.context or "").startswith("Not valid JSON (line 1, column 2). Reply with JSON.")


def test_an_approval_edit_of_json_that_does_not_parse_says_where() -> None:
    value = {"type": "tool_approval", "name": "t", "args": {"tags": ["a"], "table": "users"}}
    for locale, tags, said in (
        ("zh", '["红", ', "tags：不是有效的 JSON（第 1 行第 6 列）"),
        ("en", '["a", ', "tags: not valid JSON (line 1, column 6)"),
    ):
        request = edit_request("c", actions_of(value), locale)  # type: ignore[arg-type]
        check = check_form_values(request, {"tags": tags})
        assert check.ok, check.errors
        again = resume_value(
            APPROVAL_EDIT, "c", value, answer_with_form(request, check.values, None), locale=locale
        )
        assert isinstance(again, AskAgain)
        assert (again.request.context or "").startswith(said), again.request.context


def test_a_yes_or_no_field_takes_the_words_chinese_speakers_answer_with() -> None:
    request = _form("zh")
    for word, meant in [("好的", True), ("可以", True), ("确定", True), ("行", True), ("要", True)]:
        check = check_form_values(request, {"name": "x", "colors": ["红"], "public": word})
        assert check.ok and check.values["public"] is meant, (word, check.errors)
    for word in ("不用", "没有", "不要", "不行", "不可以", "不对", "不需要"):
        check = check_form_values(request, {"name": "x", "colors": ["红"], "public": word})
        assert check.ok and check.values["public"] is False, (word, check.errors)
    refused = check_form_values(request, {"name": "x", "colors": ["红"], "public": "也许"})
    assert not refused.ok  # neither: asked again, never guessed
