"""Normalization of the model's ask_clarification arguments: repair, limits, degradation."""

import json

import pytest

from clarigate.agent.protocol import (
    MAX_FIELDS,
    MAX_OPTIONS,
    MAX_SERIALIZED_BYTES,
    HumanInputRequest,
    detect_locale,
    normalize_request,
)


def labels(options):
    return [o.label for o in options]


def test_plain_options_become_a_choice_with_stable_ids():
    req = normalize_request(
        {
            "question": "Which framework?",
            "clarification_type": "approach_choice",
            "options": ["React", "Vue"],
        },
        "call_1",
    )
    assert req.request_id == "clarification:call_1" and req.tool_call_id == "call_1"
    assert req.input_mode == "choice_with_other"
    assert [(o.id, o.label, o.value) for o in req.options] == [
        ("option-1", "React", "React"),
        ("option-2", "Vue", "Vue"),
    ]
    assert req.locale == "en" and req.context is None
    assert "context" not in req.to_artifact()


def test_options_given_as_json_text_and_duplicates_are_dropped_case_and_width_insensitively():
    req = normalize_request(
        {"question": "Pick", "options": '["React", "react", "Ｒｅａｃｔ", " Vue ", "vue"]'}, "c"
    )
    assert labels(req.options) == ["React", "Vue"]
    assert [o.id for o in req.options] == ["option-1", "option-2"]


def test_option_dicts_keep_a_distinct_value_and_label_is_the_default_value():
    req = normalize_request(
        {"question": "DB?", "options": [{"label": "PostgreSQL", "value": "pg"}, {"label": "SQLite"}, 7]},
        "c",
    )
    assert [(o.label, o.value) for o in req.options] == [
        ("PostgreSQL", "pg"),
        ("SQLite", "SQLite"),
        ("7", "7"),
    ]


def test_string_booleans_and_unknown_field_types_and_select_without_options():
    fields = [
        {"name": "project_name", "label": "Project name", "required": "true"},
        {"name": "notes", "type": "wysiwyg", "required": "no"},
        {"name": "framework", "type": "select", "required": "yes"},
        {"name": "use_ts", "type": "boolean", "required": "false"},
        {"name": "count", "type": "integer"},
    ]
    req = normalize_request({"question": "Set up?", "fields": json.dumps(fields)}, "c")
    assert req.input_mode == "form"
    got = [(f.name, f.type, f.required) for f in req.fields]
    assert got == [
        ("project_name", "text", True),
        ("notes", "text", False),
        ("framework", "text", True),  # a select with nothing to select is a text box
        ("use_ts", "checkbox", False),
        ("count", "number", False),
    ]


def test_field_names_are_sanitized_derived_from_labels_and_deduplicated():
    req = normalize_request(
        {
            "question": "Details",
            "fields": [
                {"label": "Project Name"},
                {"name": "project name!"},
                {"name": "PROJECT_NAME", "label": "dup"},
                {"label": "截止日期", "type": "date"},
                {"type": "text"},  # neither name nor label: dropped
            ],
        },
        "c",
    )
    assert [(f.name, f.label) for f in req.fields] == [
        ("project_name", "Project Name"),
        ("field_4", "截止日期"),
    ]


def test_field_without_label_gets_a_readable_one_and_field_options_get_field_ids():
    req = normalize_request(
        {
            "question": "Q",
            "fields": [{"name": "frame_work", "type": "select", "options": '["React", "Vue"]'}],
        },
        "c",
    )
    field = req.fields[0]
    assert field.label == "Frame work"
    assert [o.id for o in field.options] == ["frame_work-option-1", "frame_work-option-2"]


def test_options_are_ignored_for_field_types_that_do_not_choose():
    req = normalize_request(
        {"question": "Q", "fields": [{"name": "n", "type": "number", "options": ["1"]}]}, "c"
    )
    assert req.fields[0].options == []


def test_unknown_clarification_type_becomes_missing_info():
    req = normalize_request({"question": "Q", "clarification_type": "urgent!!"}, "c")
    assert req.clarification_type == "missing_info"
    assert normalize_request(
        {"question": "Q", "clarification_type": "Risk-Confirmation"}, "c"
    ).clarification_type == ("risk_confirmation")


def test_input_mode_follows_fields_then_options_then_free_text():
    assert normalize_request({"question": "Q"}, "c").input_mode == "free_text"
    assert normalize_request({"question": "Q", "options": []}, "c").input_mode == "free_text"
    both = normalize_request({"question": "Q", "options": ["a"], "fields": [{"name": "x"}]}, "c")
    assert both.input_mode == "form" and both.options == []


def test_risk_confirmation_without_choices_gets_confirm_and_cancel_in_the_locale():
    en = normalize_request(
        {"question": "Delete the test data?", "clarification_type": "risk_confirmation"}, "c"
    )
    assert en.input_mode == "choice_with_other"
    assert [(o.id, o.label) for o in en.options] == [("option-1", "Confirm"), ("option-2", "Cancel")]
    zh = normalize_request({"question": "删除测试数据？", "clarification_type": "risk_confirmation"}, "c")
    assert labels(zh.options) == ["确认", "取消"]
    given = normalize_request(
        {"question": "Go?", "clarification_type": "risk_confirmation", "options": ["Drop it", "Keep it"]}, "c"
    )
    assert labels(given.options) == ["Drop it", "Keep it"]


def test_locale_is_detected_from_question_or_context():
    assert detect_locale("用哪个框架？") == "zh"
    assert detect_locale("Which framework?") == "en"
    assert detect_locale("どれ") == "en"  # kana alone is not Chinese
    req = normalize_request({"question": "Which one?", "context": "我可以两个都做"}, "c")
    assert req.locale == "zh"


@pytest.mark.parametrize(
    "text",
    [
        "会議は明日の何時からですか？",  # Japanese: kanji and kana
        "東京に行きます",
        "ｶﾀｶﾅで書いた名前",  # halfwidth katakana
        "회의는 내일 몇 시인가요?",  # Korean
        "한국 新聞",  # Hangul beside hanja
        "Please book a room for 王伟 tomorrow",  # English naming a person
        "Send the report to 李娜 and 张伟 by Friday",
    ],
)
def test_japanese_korean_and_english_naming_a_person_are_not_chinese(text: str) -> None:
    assert detect_locale(text) == "en"
    assert normalize_request({"question": text}, "c").locale == "en"


@pytest.mark.parametrize(
    "text",
    [
        "帮我部署 api-server 到 staging",
        "请 review 一下这个 PR",
        "好",
        "列夫・托尔斯泰的书有哪些？",
        "王伟",
        "帮我看下这个PR https://github.com/acme/web/pull/123",  # a link is not English
        "用 docker compose up -d 启动",
        "这个 bug 怎么修 TypeError: cannot read property foo of undefined",  # a pasted error
        "选 A",
        "ok 好",
        "部署 api-server 至 staging-eu-1 环境",  # no grammar word: identifiers are not counted
    ],
)
def test_chinese_with_english_terms_in_it_is_chinese(text: str) -> None:
    assert detect_locale(text) == "zh"


def test_empty_or_missing_question_gets_a_localized_default():
    assert normalize_request({}, "c").question == "Could you tell me more about what you need?"
    assert (
        normalize_request({"question": "   ", "context": "需要更多信息"}, "c").question
        == "能再具体说明一下您的需求吗？"
    )


def test_long_strings_are_cut_with_an_ellipsis():
    req = normalize_request({"question": "q" * 500, "options": ["o" * 300]}, "c")
    assert len(req.question) == 200 and req.question.endswith("…")
    assert len(req.options[0].label) == 200 and req.options[0].label.endswith("…")


def test_option_and_field_counts_are_limited():
    req = normalize_request({"question": "Q", "options": [f"o{i}" for i in range(40)]}, "c")
    assert len(req.options) == MAX_OPTIONS
    req = normalize_request({"question": "Q", "fields": [{"name": f"f{i}"} for i in range(30)]}, "c")
    assert len(req.fields) == MAX_FIELDS


def fits(req):
    return (
        len(json.dumps(req.to_artifact())) <= MAX_SERIALIZED_BYTES
        and len(req.model_dump_json().encode()) <= MAX_SERIALIZED_BYTES
    )


def test_oversize_form_drops_optional_fields_first_and_fits():
    many = [f"{i:03d}" + "x" * 97 for i in range(30)]  # ~6 KB of options per field
    fields = [
        {"name": f"f{i}", "type": "select", "options": many, "required": i in (3, 9)} for i in range(16)
    ]
    req = normalize_request({"question": "Q", "fields": fields}, "c")
    assert fits(req)
    assert req.input_mode == "form"
    assert [f.name for f in req.fields] == ["f3", "f9"]  # the required ones survive
    assert all(len(f.options) == MAX_OPTIONS for f in req.fields)


def test_a_form_that_cannot_fit_degrades_to_fewer_options_then_free_text():
    # Escaped as JSON, each Chinese character takes six bytes: one such field is ~60 KB.
    long_zh = ["选项" * 99 + str(i) for i in range(24)]
    fields = [{"name": "choice", "type": "select", "options": long_zh, "required": True}]
    req = normalize_request({"question": "选哪个？", "fields": fields, "options": long_zh}, "c")
    assert fits(req)
    assert req.input_mode == "choice_with_other"
    assert 0 < len(req.options) < MAX_OPTIONS
    assert [o.label for o in req.options] == long_zh[: len(req.options)]  # the last ones go first
    alone = normalize_request({"question": "选哪个？", "fields": fields}, "c")
    assert fits(alone) and alone.input_mode == "free_text" and alone.question == "选哪个？"


@pytest.mark.parametrize(
    "args",
    [
        None,
        "just a question as text",
        '{"question": "JSON text args", "options": "[\\"a\\"]"}',
        ["a", "list"],
        42,
        {"question": None, "options": None, "fields": None, "context": None},
        {
            "question": 3.5,
            "options": [None, [], {}, {"label": None}, True],
            "fields": [None, 1, "x", [], {"name": {}}],
        },
        {
            "question": {"nested": ["junk"]},
            "clarification_type": ["x"],
            "fields": {"a": {"type": 5}, "b": "B"},
        },
        {"question": "bad \ud800 surrogate \x00 nul", "options": "not json ["},
        {"fields": '{"name": "solo", "type": "select", "options": "a\\nb"}'},
    ],
)
def test_junk_never_raises_and_gives_a_valid_request(args):
    req = normalize_request(args, "c")
    assert HumanInputRequest.model_validate(json.loads(json.dumps(req.to_artifact()))) == req
    assert req.question


def test_junk_details_are_repaired_not_dropped():
    assert normalize_request("just a question as text", "c").question == "just a question as text"
    mapping = normalize_request({"question": "Q", "fields": {"a": {"type": 5}, "b": "B"}}, "c")
    assert [(f.name, f.label) for f in mapping.fields] == [("a", "A"), ("b", "B")]
    solo = normalize_request({"fields": '{"name": "solo", "type": "select", "options": "a\\nb"}'}, "c")
    assert solo.fields[0].type == "select" and labels(solo.fields[0].options) == ["a", "b"]
    cleaned = normalize_request({"question": "bad \ud800 surrogate \x00 nul"}, "c")
    assert cleaned.question == "bad  surrogate  nul"


def test_absurdly_nested_json_text_keeps_the_question():
    req = normalize_request({"question": "Which?", "options": "[" * 100_000 + "]" * 100_000}, "c")
    assert req.question == "Which?" and req.input_mode in ("free_text", "choice_with_other")


def test_risk_confirmation_with_one_choice_gets_a_way_to_say_no():
    req = normalize_request(
        {
            "question": "Drop the table?",
            "clarification_type": "risk_confirmation",
            "options": ["Yes drop it"],
        },
        "c",
    )
    assert [o.label for o in req.options] == ["Yes drop it", "Cancel"]
    assert req.options[0].id == "option-1"
