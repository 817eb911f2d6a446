"""Declined answers (a question closed without an answer) and which typed messages are answers."""

from __future__ import annotations

import pytest

from clarigate.agent.protocol import (
    AnsweredBy,
    answer_declined,
    answer_message_text,
    answer_with_option,
    closed_line,
    looks_like_answer,
    normalize_request,
)

BY = AnsweredBy(platform="slack", user_id="U1", display_name="Ann")
CHOICE = normalize_request({"question": "Which framework?", "options": ["React", "Vue", "3"]}, "c1")
RISK = normalize_request(
    {
        "question": "Delete the test data?",
        "clarification_type": "risk_confirmation",
        "options": ["Delete", "Keep"],
    },
    "c2",
)
FORM = normalize_request(
    {
        "question": "Project details?",
        "fields": [
            {"name": "project_name", "label": "Project name", "required": True},
            {"name": "replicas", "type": "number"},
        ],
    },
    "c3",
)
ONE_NUMBER = normalize_request(
    {"question": "How many?", "fields": [{"name": "count", "type": "number"}]}, "c4"
)
FREE = normalize_request({"question": "What should it be called?"}, "c5")
ZH = normalize_request({"question": "用哪个数据库？", "options": ["PostgreSQL", "SQLite"]}, "c6")


def test_a_declined_answer_says_so_to_the_agent_and_keeps_its_structure():
    response = answer_declined(CHOICE, BY)

    assert response.response_kind == "declined" and response.reason == "cancelled"
    assert response.option_id is None and response.values is None
    assert response.value == "(declined to answer)"
    assert response.to_payload()["reason"] == "cancelled"
    assert answer_message_text(CHOICE, response) == (
        'For your clarification "Which framework?", I declined to answer. '
        "Go on without it if you can, or ask again only if you truly cannot."
    )
    assert "reason" not in answer_with_option(CHOICE, "option-1", BY).to_payload()


def test_declined_in_chinese():
    response = answer_declined(ZH, BY)
    assert response.value == "（未回答，已取消）"
    assert answer_message_text(ZH, response).startswith("对于您的澄清问题「用哪个数据库？」，我选择不回答。")
    assert closed_line(ZH, response, "Ann") == "✖ Ann 已取消"


@pytest.mark.parametrize(
    ("reason", "line"),
    [
        ("cancelled", "✖ Cancelled by Ann"),
        ("superseded", "✖ Closed: Ann sent a new message instead"),
        ("restarted", "✖ Closed: Ann started a new conversation"),
    ],
)
def test_the_closed_line_names_the_reason(reason, line):
    assert closed_line(CHOICE, answer_declined(CHOICE, BY, reason), "Ann") == line


def test_the_closed_line_of_an_answer():
    assert closed_line(CHOICE, answer_with_option(CHOICE, "option-2", BY), "Ann") == "✅ Answered by Ann: Vue"


@pytest.mark.parametrize(
    ("request_", "text", "expected"),
    [
        (CHOICE, "2", True),
        (CHOICE, " vue ", True),
        (CHOICE, "ＲＥＡＣＴ", True),  # full-width, any case
        (CHOICE, "3", True),  # the label "3"
        (CHOICE, "create a project", False),
        (CHOICE, "7", False),  # no seventh option
        (CHOICE, "", False),
        (RISK, "Delete", True),
        (RISK, "delete the test data", False),
        (FORM, "project_name: shop", True),
        (FORM, "Project name: shop\nreplicas: two", True),  # a form line, even with a bad value
        (FORM, "replicas: 2", True),  # partial: asked for the rest, still meant for the form
        (FORM, "create a project", False),
        (FORM, "note: call me later", False),  # a colon, but no field of this form
        (ONE_NUMBER, "3", True),  # a one-field form takes its bare value when it fits
        (ONE_NUMBER, "create a project", False),
        (FREE, "create a project", True),  # a free-text question takes any text
        (ZH, "2", True),
        (ZH, "帮我建一个项目", False),
    ],
)
def test_which_typed_messages_are_answers(request_, text, expected):
    assert looks_like_answer(request_, text) is expected
