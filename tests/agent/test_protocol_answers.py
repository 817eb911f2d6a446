"""Typed form values and the answer builders."""

import datetime as dt

import pytest

from clarigate.agent.protocol import (
    AnsweredBy,
    HumanInputResponse,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    check_form_values,
    normalize_request,
)

FORM = normalize_request(
    {
        "question": "Set up the project?",
        "fields": [
            {"name": "project_name", "label": "Project name", "required": True},
            {"name": "notes", "type": "textarea"},
            {
                "name": "framework",
                "label": "Framework",
                "type": "select",
                "required": True,
                "options": ["React", {"label": "Vue.js", "value": "vue"}],
            },
            {"name": "features", "type": "multi_select", "options": ["Router", "Store", "Yes, tests"]},
            {"name": "init_git", "type": "checkbox"},
            {"name": "replicas", "type": "number"},
            {"name": "deadline", "type": "date"},
        ],
    },
    "c",
)
ZH_FORM = normalize_request(
    {
        "question": "填写项目信息",
        "fields": [
            {"name": "name", "label": "名称", "required": True},
            {"name": "count", "type": "number"},
            {"name": "db", "type": "select", "options": ["PostgreSQL", "SQLite"]},
        ],
    },
    "c",
)
BASE = {"project_name": "demo", "framework": "React"}


def typed(name, raw):
    check = check_form_values(FORM, {**BASE, name: raw})
    assert check.ok, check.errors
    return check.values[name]


def error(name, raw, form=FORM, base=BASE):
    check = check_form_values(form, {**base, name: raw})
    assert not check.ok
    return check.errors[name]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("3", 3),
        (" 42 ", 42),
        ("2.5", 2.5),
        ("4.0", 4),
        (7, 7),
        (7.0, 7),
        ("１２", 12),
        ("-3", -3),
        ("1,200", 1200),
        (["8"], 8),
    ],
)
def test_number_values_are_int_when_integral_else_float(raw, want):
    value = typed("replicas", raw)
    assert value == want and type(value) is type(want)


@pytest.mark.parametrize("raw", ["three", "1,2", "nan", "inf", True, ["1", "2"], {"n": 1}])
def test_bad_numbers_say_what_is_expected(raw):
    assert error("replicas", raw) == "Enter a number"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("No", False),
        ("yes", True),
        ("1", True),
        ("0", False),
        ("是", True),
        ("否", False),
        (1, True),
        (["checked"], True),
        (["anything"], True),
        ([], False),
    ],
)
def test_checkbox_values(raw, want):
    assert typed("init_git", raw) is want


def test_bad_checkbox_value():
    assert error("init_git", "maybe") == "Answer yes or no"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("React", "React"),
        ("react", "React"),
        ("ＲＥＡＣＴ", "React"),
        ("framework-option-2", "vue"),
        ("vue", "vue"),
        ("Vue.js", "vue"),
        ("2", "vue"),
        (["React"], "React"),
    ],
)
def test_select_takes_an_id_value_label_or_number_and_gives_the_value(raw, want):
    assert typed("framework", raw) == want


def test_bad_select_lists_the_choices():
    assert error("framework", "Angular") == "Choose one of: React, Vue.js"
    assert error("framework", "9") == "Choose one of: React, Vue.js"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (["Router", "features-option-2"], ["Router", "Store"]),
        ("router, store", ["Router", "Store"]),
        ("Router、Store", ["Router", "Store"]),
        ("Store，Router，Store", ["Router", "Store"]),  # in the options' order, as taps give them
        ("Yes, tests", ["Yes, tests"]),  # a label with a comma in it is one choice
        ("store, yes,  tests；router", ["Router", "Store", "Yes, tests"]),
        ("1, 3", ["Router", "Yes, tests"]),
        ("1 3", ["Router", "Yes, tests"]),  # numbers as the terminal lists them
        (" 3  2 ", ["Store", "Yes, tests"]),
        ("Router", ["Router"]),
    ],
)
def test_multi_select_gives_a_list_of_option_values(raw, want):
    assert typed("features", raw) == want


def test_a_choice_made_of_marks_is_chosen_after_another():
    # "<, :" chose "<" alone: ", :" was set aside as the marks a sentence ends with
    form = normalize_request(
        {"question": "Q?", "fields": [{"name": "m", "type": "multi_select", "options": ["<", ":", "B"]}]}, "c"
    )
    assert check_form_values(form, {"m": "<, :"}).values == {"m": ["<", ":"]}
    assert check_form_values(form, {"m": "B, :"}).values == {"m": [":", "B"]}
    assert check_form_values(form, {"m": "<, :, B"}).values == {"m": ["<", ":", "B"]}
    assert check_form_values(form, {"m": "B, ."}).values == {"m": ["B"]}  # a mark alone: set aside


def test_bad_multi_select_lists_the_choices():
    assert error("features", "Router, Auth") == "Choose from: Router, Store, Yes, tests"
    assert error("features", "1 9") == "Choose from: Router, Store, Yes, tests"
    assert error("features", "Router Store") == "Choose from: Router, Store, Yes, tests"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("2026-12-01", "2026-12-01"),
        ("2026/12/1", "2026-12-01"),
        ("2026-12-01T09:30:00Z", "2026-12-01"),
        ("2026-12-01 +0800", "2026-12-01"),
        ("2026年12月1日", "2026-12-01"),
        ("20261201", "2026-12-01"),
        (dt.date(2026, 12, 1), "2026-12-01"),
        (dt.datetime(2026, 12, 1, 8, 0), "2026-12-01"),
    ],
)
def test_dates_become_iso(raw, want):
    assert typed("deadline", raw) == want


@pytest.mark.parametrize("raw", ["tomorrow", "2026-1201", "2026-12", 20261201])
def test_bad_dates_show_the_expected_form(raw):
    assert error("deadline", raw) == "Use a date like 2026-12-01"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("2026-02-30", "2026-02-30 is not a date on the calendar"),
        (" 2026-13-01 ", "2026-13-01 is not a date on the calendar"),
        ("2026/2/29T09:00", "2026/2/29 is not a date on the calendar"),
    ],
)
def test_dates_in_the_right_form_that_do_not_exist_say_so(raw, want):
    assert error("deadline", raw) == want


def test_a_date_that_does_not_exist_says_so_in_chinese():
    zh = FORM.model_copy(update={"locale": "zh"})
    assert (
        check_form_values(zh, {"deadline": "2026年2月30日"}).errors["deadline"]
        == "2026年2月30日 不是日历上的日期"
    )


def test_text_is_stripped_and_textarea_keeps_lines():
    assert typed("project_name", "  demo  ") == "demo"
    assert typed("notes", " line one\nline two ") == "line one\nline two"
    assert typed("project_name", 12) == "12"


def test_required_fields_missing_or_empty_are_errors_and_optional_empty_fields_are_omitted():
    check = check_form_values(FORM, {"project_name": "  ", "notes": "", "replicas": None, "features": " , "})
    assert check.errors == {"project_name": "This field is required", "framework": "This field is required"}
    assert check.values == {}
    assert not check.ok


def test_unknown_keys_are_ignored_and_keys_match_case_insensitively():
    check = check_form_values(FORM, {"Project_Name": "demo", "framework": "vue", "surprise": "x"})
    assert check.ok and check.values == {"project_name": "demo", "framework": "vue"}


def test_false_and_zero_are_answers_not_blanks():
    check = check_form_values(FORM, {**BASE, "init_git": False, "replicas": 0})
    assert check.values["init_git"] is False and check.values["replicas"] == 0


def test_errors_are_in_the_request_locale():
    check = check_form_values(ZH_FORM, {"count": "很多", "db": "MySQL"})
    assert check.errors == {
        "name": "此项为必填",
        "count": "请输入数字",
        "db": "请从以下选项中选择一个：PostgreSQL，SQLite",
    }


def test_checking_typed_values_again_changes_nothing():
    raw = {**BASE, "features": "1, 2", "init_git": "yes", "replicas": "3.5", "deadline": "2026/1/2"}
    first = check_form_values(FORM, raw)
    again = check_form_values(FORM, first.values)
    assert again.ok and again.values == first.values


def test_answer_with_option_uses_the_label_and_rejects_unknown_ids():
    req = normalize_request(
        {"question": "DB?", "options": [{"label": "PostgreSQL", "value": "pg"}, "SQLite"]}, "c9"
    )
    by = AnsweredBy(platform="telegram", user_id="42")
    answer = answer_with_option(req, "option-1", by)
    assert answer.to_payload() == {
        "version": 2,
        "kind": "human_input_response",
        "source": "ask_clarification",
        "request_id": "clarification:c9",
        "response_kind": "option",
        "option_id": "option-1",
        "value": "PostgreSQL",
        "answered_by": {"platform": "telegram", "user_id": "42"},
    }
    with pytest.raises(ValueError):
        answer_with_option(req, "option-3", by)


def test_answer_with_text_and_form_round_trip_as_payloads():
    text = answer_with_text(FORM, " just do it \n", None)
    assert text.response_kind == "text" and text.value == "just do it" and text.option_id is None
    form = answer_with_form(
        FORM, {"project_name": "demo", "framework": "framework-option-2", "init_git": "no"}, None
    )
    assert form.response_kind == "form"
    assert form.values == {"project_name": "demo", "framework": "vue", "init_git": False}
    assert form.value == "Project name: demo; Framework: Vue.js; Init git: no"
    assert HumanInputResponse.model_validate(form.to_payload()) == form


def test_answer_with_form_refuses_invalid_values():
    with pytest.raises(ValueError):
        answer_with_form(FORM, {"project_name": "demo"}, None)


def test_a_required_checkbox_left_unticked_is_an_answer():
    req = normalize_request(
        {"question": "Q", "fields": [{"name": "agree", "type": "checkbox", "required": True}]}, "c"
    )
    assert check_form_values(req, {"agree": []}).values == {"agree": False}
    assert check_form_values(req, {}).errors == {"agree": "This field is required"}
