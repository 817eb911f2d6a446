"""Typed replies to a pending request: numbers, labels, `name: value` lines, free text."""

import pytest

from clarigate.agent.protocol import AnsweredBy, looks_like_answer, normalize_request, parse_typed_reply

BY = AnsweredBy(platform="telegram", user_id="7", display_name="Li")
CHOICE = normalize_request({"question": "Which framework?", "options": ["React", "Vue", "Svelte Kit"]}, "c1")
FREE = normalize_request({"question": "What name?"}, "c2")
FORM = normalize_request(
    {
        "question": "Set up?",
        "fields": [
            {"name": "project_name", "label": "Project name", "required": True},
            {
                "name": "framework",
                "label": "Framework",
                "type": "select",
                "options": ["React", "Vue"],
                "required": True,
            },
            {"name": "features", "type": "multi_select", "options": ["Router", "Store"]},
            {"name": "init_git", "label": "Init git", "type": "checkbox"},
            {"name": "notes", "type": "textarea"},
        ],
    },
    "c3",
)


def option_of(request, text):
    reply = parse_typed_reply(request, text, BY)
    assert reply.response is not None and not reply.problems
    return reply.response.option_id if reply.response.response_kind == "option" else None


@pytest.mark.parametrize(
    ("text", "option_id"),
    [
        ("2", "option-2"),
        (" 3 ", "option-3"),
        ("1.", "option-1"),
        ("#2", "option-2"),
        ("２", "option-2"),
        ("vue", "option-2"),
        ("  VUE ", "option-2"),
        ("Ｖｕｅ", "option-2"),
        ("svelte   kit", "option-3"),
    ],
)
def test_a_number_or_a_label_picks_the_option(text, option_id):
    assert option_of(CHOICE, text) == option_id


def test_anything_else_is_a_free_text_answer():
    reply = parse_typed_reply(CHOICE, "Angular, but only if it is quick", BY)
    assert reply.response.response_kind == "text"
    assert reply.response.value == "Angular, but only if it is quick"
    assert reply.response.answered_by == BY
    assert option_of(CHOICE, "4") is None  # out of range: the person meant "4"
    assert option_of(CHOICE, "0") is None


def test_a_numeric_label_wins_over_the_position():
    replicas = normalize_request({"question": "How many replicas?", "options": ["3", "1", "5"]}, "c")
    assert option_of(replicas, "1") == "option-2"
    assert option_of(replicas, "2") == "option-2"  # no option is labelled 2: it is the second


def test_empty_reply_is_a_problem_not_an_answer():
    for request in (CHOICE, FREE):
        reply = parse_typed_reply(request, "   ", BY)
        assert reply.response is None and reply.problems == ["Type your answer as a reply."]
    zh = normalize_request({"question": "叫什么名字？"}, "c")
    assert parse_typed_reply(zh, "", BY).problems == ["请直接回复您的答案。"]


def test_free_text_request_takes_the_text_even_when_it_is_a_number():
    reply = parse_typed_reply(FREE, " 1 ", BY)
    assert reply.response.response_kind == "text" and reply.response.value == "1"


def test_form_lines_fill_fields_by_name_or_label():
    text = (
        "project_name: demo\nFramework： vue\nfeatures: Router, Store\n"
        "Init git: yes\nnotes: first line\nsecond line"
    )
    reply = parse_typed_reply(FORM, text, BY)
    assert reply.problems == []
    assert reply.response.response_kind == "form"
    assert reply.response.values == {
        "project_name": "demo",
        "framework": "Vue",
        "features": ["Router", "Store"],
        "init_git": True,
        "notes": "first line\nsecond line",
    }
    assert reply.response.answered_by == BY


def test_form_keys_are_forgiving_about_case_list_marks_and_notes():
    text = "1. PROJECT NAME (required): demo\n- project-name: demo2\n* framework: 2\nurl: http://x.test/a:b"
    reply = parse_typed_reply(FORM, text, BY)
    # The last line names no field, so it continues the framework value and spoils it.
    assert reply.response is None
    assert reply.problems == ["Framework: Choose one of: React, Vue"]
    ok = parse_typed_reply(FORM, "1. PROJECT NAME (required): demo\n* framework: 2", BY)
    assert ok.response.values == {"project_name": "demo", "framework": "Vue"}


def test_a_turkish_field_label_typed_in_capitals_names_its_field():
    weather = normalize_request(
        {
            "question": "Hava?",
            "fields": [
                {"name": "temperature", "label": "sıcaklık", "type": "number", "required": True},
                {"name": "rain", "label": "yağış", "type": "select", "options": ["ılık", "yok"]},
            ],
        },
        "c6",
    )
    reply = parse_typed_reply(weather, "SICAKLIK: 20\nYAĞIŞ: ILIK", BY)  # the capital of "ı" is "I"
    assert reply.problems == []
    assert reply.response.values == {"temperature": 20, "rain": "ılık"}
    assert looks_like_answer(weather, "SICAKLIK: 20")  # so it answers instead of closing as a new message
    city = normalize_request({"question": "?", "fields": [{"name": "city", "label": "şehir"}]}, "c7")
    assert parse_typed_reply(city, "ŞEHİR: İzmir", BY).response.values == {"city": "İzmir"}


def test_missing_and_invalid_fields_are_all_named():
    reply = parse_typed_reply(FORM, "framework: Angular\ninit_git: perhaps", BY)
    assert reply.response is None
    assert reply.problems == [
        "Project name: This field is required",
        "Framework: Choose one of: React, Vue",
        "Init git: Answer yes or no",
    ]


def test_a_refused_form_reply_keeps_its_valid_lines_and_the_next_completes_them():
    first = parse_typed_reply(FORM, "project_name: demo\nframework: Angular\ninit_git: yes", BY)
    assert first.response is None and first.problems == ["Framework: Choose one of: React, Vue"]
    assert first.kept == {"project_name": "demo", "init_git": "yes"}  # the texts, not Angular

    again = parse_typed_reply(FORM, "init_git: perhaps", BY, kept=first.kept)  # given again: the new value
    assert again.kept == {"project_name": "demo"}
    assert again.problems == ["Framework: This field is required", "Init git: Answer yes or no"]

    done = parse_typed_reply(FORM, "Framework: vue", BY, kept={**again.kept, "stray": "x", "notes": 3})
    assert done.response.values == {"project_name": "demo", "framework": "Vue"}  # unknown keys dropped
    assert done.kept == {}


def test_form_reply_naming_no_field_lists_the_required_ones():
    reply = parse_typed_reply(FORM, "make it snappy", BY)
    assert reply.response is None
    assert reply.problems == ["Project name: This field is required", "Framework: This field is required"]
    optional = normalize_request({"question": "Q", "fields": [{"name": "a"}, {"name": "b"}]}, "c")
    assert parse_typed_reply(optional, "hello", BY).problems == [
        "Reply with one `name: value` line per field."
    ]


def test_one_field_form_accepts_a_bare_value_and_a_number_for_its_select():
    single = normalize_request(
        {
            "question": "Which DB?",
            "fields": [{"name": "db", "type": "select", "options": ["PostgreSQL", "SQLite"]}],
        },
        "c",
    )
    assert parse_typed_reply(single, "2", BY).response.values == {"db": "SQLite"}
    assert parse_typed_reply(single, "postgresql", BY).response.values == {"db": "PostgreSQL"}
    assert parse_typed_reply(single, "db: sqlite", BY).response.values == {"db": "SQLite"}
    date = normalize_request(
        {"question": "When?", "fields": [{"name": "on", "type": "date", "required": True}]}, "c"
    )
    assert parse_typed_reply(date, "2026/12/1", BY).response.values == {"on": "2026-12-01"}
    assert parse_typed_reply(date, "soon", BY).problems == ["On: Use a date like 2026-12-01"]
    assert parse_typed_reply(date, "on: 2026-02-30", BY).problems == [
        "On: 2026-02-30 is not a date on the calendar"
    ]


def test_chinese_form_problems_use_chinese_punctuation():
    zh = normalize_request(
        {
            "question": "创建项目",
            "fields": [{"label": "项目名称", "required": True}, {"label": "副本数", "type": "number"}],
        },
        "c",
    )
    reply = parse_typed_reply(zh, "副本数：很多", BY)
    assert reply.problems == ["项目名称：此项为必填", "副本数：请输入数字"]
    ok = parse_typed_reply(zh, "项目名称：演示\n副本数：３", BY)
    assert ok.response.values == {"field_1": "演示", "field_2": 3}


@pytest.mark.parametrize("text", [None, 5, "\x00", ":", "：：", "\n\n", "project_name:", ": value"])
def test_odd_replies_never_raise(text):
    for request in (CHOICE, FREE, FORM):
        reply = parse_typed_reply(request, text, BY)
        assert (reply.response is None) != (not reply.problems)


def test_a_label_holding_a_colon_still_names_its_field():
    req = normalize_request(
        {
            "question": "When?",
            "fields": [{"name": "t", "label": "Time (HH:MM)", "required": True}, {"name": "url"}],
        },
        "c",
    )
    reply = parse_typed_reply(req, "Time (HH:MM): 10:30\nurl: http://x.test:8080/a", BY)
    assert reply.response.values == {"t": "10:30", "url": "http://x.test:8080/a"}


DB = normalize_request(
    {"question": "Which database?", "options": ["PostgreSQL", "SQLite", "Yes!", "Yes."]}, "c4"
)


@pytest.mark.parametrize(
    ("text", "option_id"),
    [
        ("PostgreSQL.", "option-1"),
        ("postgresql!", "option-1"),
        ("PostgreSQL ?", "option-1"),
        ("ｐｏｓｔｇｒｅｓｑｌ！", "option-1"),  # full-width, mark and all
        ("sqlite。", "option-2"),
        ("SQLite...", "option-2"),
        ("yes!", "option-3"),  # an exact label still wins
        ("Yes.", "option-4"),
    ],
)
def test_trailing_punctuation_and_case_still_pick_the_option(text, option_id):
    assert option_of(DB, text) == option_id
    assert looks_like_answer(DB, text)  # so it answers instead of closing as a new message


def test_a_turkish_label_typed_in_capitals_picks_the_option():
    weather = normalize_request({"question": "Hava?", "options": ["ılık", "sıcak", "istanbul"]}, "c5")
    assert option_of(weather, "ILIK") == "option-1"  # the capital of "ı" is "I"
    assert option_of(weather, "SICAK") == "option-2"
    assert option_of(weather, "ISTANBUL") == "option-3"
    assert option_of(weather, "İSTANBUL") == "option-3"  # the dotted capital of "i" too


def test_trailing_punctuation_stays_conservative():
    assert option_of(DB, "yes") is None  # "Yes!" or "Yes.": ambiguous, a free-text answer
    assert not looks_like_answer(DB, "PostgreSQL, please")  # more than a trailing mark
    assert not looks_like_answer(DB, "Postgre.SQL")
    assert option_of(DB, "2.") == "option-2"  # still the second option's number
    single = normalize_request(
        {"question": "DB?", "fields": [{"name": "db", "type": "select", "options": ["PostgreSQL", "MySQL"]}]},
        "c",
    )
    assert parse_typed_reply(single, "PostgreSQL!", BY).response.values == {"db": "PostgreSQL"}
