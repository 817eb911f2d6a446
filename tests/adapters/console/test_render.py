"""What the terminal prints for each item the core sends (pure functions)."""

from __future__ import annotations

import pytest

from clarigate.adapters.console.render import field_hint, field_prompt, inert, live_delta, render, words
from clarigate.adapters.testing import choice_request, form_request, text_request
from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import FormField, HumanInputResponse, Option, catalog
from clarigate.gateway.boundary.messages import Conversation, PendingView
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    ProgressUpdate,
    TextReply,
)

FIELDS = [
    FormField(name="name", label="Project name", type="text", required=True),
    FormField(
        name="language",
        label="Language",
        type="select",
        options=[Option(id="py", label="Python", value="python"), Option(id="go", label="Go", value="go")],
    ),
]


def question(request: object) -> ClarificationOut:
    return ClarificationOut(request=request, fallback_text="", token="t1")  # type: ignore[arg-type]


def closed(request: object, response: HumanInputResponse) -> ClarificationClosed:
    conversation = Conversation(platform="console", chat_id="you", is_direct=True)
    view = PendingView(request=request, token="t1", conversation=conversation, response=response)  # type: ignore[arg-type]
    return ClarificationClosed(view=view, answered_line="")


def test_replies_and_errors_are_prefixed() -> None:
    assert render(TextReply(text="Done.")) == "bot> Done."
    assert render(ErrorReply(text="Sorry.")) == "  ! Sorry."


def test_model_text_cannot_drive_the_terminal() -> None:
    shown = render(TextReply(text="\x1b[2J\x1b]0;owned\x07hi\tthere\nnext\x9b31m"))

    assert shown == "bot> [2J]0;ownedhi\tthere\nnext31m"
    assert inert("plain") == "plain"


def test_a_choice_shows_numbered_options() -> None:
    shown = render(question(choice_request("Which database?", ["PostgreSQL", "SQLite"])))

    assert shown is not None
    assert shown.startswith("\n") and shown.endswith("\n")
    assert "Which database?" in shown and "  1. PostgreSQL\n  2. SQLite" in shown
    assert shown.rstrip().endswith(
        "Reply with an option's number or label, or /cancel to dismiss the question."
    )
    assert "your own answer" not in shown  # other text is a new request: there is no "Other…"


def test_a_risk_confirmation_asks_for_an_option_in_both_languages() -> None:
    request = choice_request("Delete the test data?", ["No, keep it", "Yes, delete everything"])
    risky = request.model_copy(update={"clarification_type": "risk_confirmation"})
    shown = render(question(risky))
    assert shown is not None and shown.startswith("\n⚠️")
    assert shown.rstrip().endswith(
        "  2. Yes, delete everything\n\n"
        "Reply with an option's number or label, or /cancel to dismiss the question."
    )

    chinese = choice_request("删除测试数据吗？", ["不，保留", "是的，全部删除"]).model_copy(
        update={"clarification_type": "risk_confirmation", "locale": "zh"}
    )
    shown = render(question(chinese))
    assert shown is not None and shown.rstrip().endswith("请回复选项编号或名称，或发送 /取消 关闭此问题。")
    assert "直接输入您的答案" not in shown


def test_an_approval_shows_approve_and_reject() -> None:
    request = approval_request("i1", [Action("delete_data", {"target": "x"}, ("approve", "reject"))], "en")

    shown = render(question(request))

    assert shown is not None and "Approve running delete_data?" in shown
    assert "  1. Approve" in shown and "  2. Reject" in shown


@pytest.mark.parametrize(
    ("locale", "last"),
    [
        ("en", "Type your answer as a reply, or /cancel to dismiss the question."),
        ("zh", "请直接回复您的答案，或发送 /取消 关闭此问题。"),
    ],
)
def test_an_open_question_says_how_to_dismiss_it(locale: str, last: str) -> None:
    request = text_request("What should the bot be called?").model_copy(update={"locale": locale})
    shown = render(question(request))

    assert shown is not None and shown.rstrip().endswith("\n\n" + last)


def test_a_form_lists_its_fields_but_asks_for_no_name_value_lines() -> None:
    shown = render(question(form_request("Tell me about the project.", FIELDS)))

    assert shown is not None and "Tell me about the project." in shown
    assert "  1. Project name (required)" in shown
    assert "name: value" not in shown  # the terminal asks field by field instead


def test_a_question_closed_by_a_new_message_says_so_and_an_answer_prints_nothing() -> None:
    request = choice_request("Which database?", ["PostgreSQL", "SQLite"])
    declined = HumanInputResponse(
        request_id=request.request_id, response_kind="declined", value="", reason="superseded"
    )
    answered = HumanInputResponse(
        request_id=request.request_id, response_kind="option", option_id="option-2", value="SQLite"
    )

    assert render(closed(request, declined)) == (
        "(the open question is closed: this goes to the agent as a new request)"
    )
    assert render(closed(request, answered)) is None
    cancelled = declined.model_copy(update={"reason": "cancelled"})
    assert render(closed(request, cancelled)) is None  # the core's own reply says it


def test_working_is_shown_once_and_done_prints_nothing() -> None:
    assert render(ProgressUpdate(state="started", locale="zh")) == "  ⏳ 处理中…"
    assert render(ProgressUpdate(state="done")) is None


def test_field_prompts_in_both_languages() -> None:
    assert field_prompt(FIELDS[0]) == "  Project name (required): "
    assert field_prompt(FIELDS[1], "zh") == "  Language [1) Python  2) Go]："
    many = FIELDS[1].model_copy(update={"type": "multi_select"})
    assert field_prompt(many) == "  Language [1) Python  2) Go, several allowed]: "
    date = FormField(name="due", label="截止日期", type="date")
    assert field_prompt(date, "zh") == "  截止日期 [YYYY-MM-DD]："  # a full-width colon
    required = FormField(name="name", label="项目名称", required=True)
    assert field_prompt(required, "zh") == "  项目名称（必填）："


def test_a_live_line_grows_by_its_new_tail_or_starts_again() -> None:
    assert live_delta("The guide", "The guide says") == (" says", False)
    assert live_delta("The guide", "Another text") == ("Another text", True)


@pytest.mark.parametrize(
    ("locale", "new", "in_banner"),
    [
        ("en", "a new conversation", "/new starts a new conversation"),
        ("zh", "开始新的对话", "/new 开始新的对话"),
    ],
)
def test_the_start_up_line_names_new_in_the_words_of_help(locale: str, new: str, in_banner: str) -> None:
    assert new in catalog.text("cmd_new", locale)  # what /help says of /new
    assert in_banner in words("banner", locale)


@pytest.mark.parametrize(("locale", "shown"), [("en", "  e.g. my-project"), ("zh", "  例如 my-project")])
def test_a_placeholder_reads_as_an_example_not_as_a_value_enter_takes(locale: str, shown: str) -> None:
    field = FormField(name="name", label="Project name", required=True, placeholder="my-project")
    request = form_request("Tell me about the project.", [field]).model_copy(update={"locale": locale})

    assert field_hint(field, request) == shown
    said = FormField(name="name", label="Project name", placeholder="e.g. my-project")
    assert field_hint(said, form_request("Tell me.", [said])) == "  e.g. my-project"  # not twice


def test_a_schemas_description_and_range_stay_a_hint_and_a_default_stays_the_default() -> None:
    field = FormField(name="guests", label="Guests", type="number", placeholder="1 to 10", default=2)
    request = form_request("Book the trip.", [field]).model_copy(update={"source": "interrupt"})

    assert field_hint(field, request) == "  · 1 to 10"  # a typed interrupt's: what the schema says
    assert field_prompt(field).endswith("(now 2; Enter keeps it): ")
