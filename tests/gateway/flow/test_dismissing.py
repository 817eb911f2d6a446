"""Questions can always be dismissed, and a new request is never swallowed as an answer.

Cancel (the button or ``/cancel``) closes a question for everyone and tells the agent the
person declined; a typed message that is not an answer to a choice or form closes the
question as superseded and runs as a request; ``/new`` closes what is open.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, Option
from clarigate.gateway.boundary.messages import AnswerStatus, Sender
from clarigate.gateway.boundary.outbound_items import ClarificationOut
from clarigate.gateway.flow import answering
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
PROJECT_FORM = form_request(
    "Project details?",
    [
        FormField(name="name", label="Project name", required=True),
        FormField(
            name="db",
            label="Database",
            type="select",
            options=[
                Option(id="db-option-1", label="PostgreSQL", value="postgres"),
                Option(id="db-option-2", label="SQLite", value="sqlite"),
            ],
        ),
    ],
)
FREE = choice_request("What should the app be called?", []).model_copy(update={"input_mode": "free_text"})


def ask_on_build(request):
    """``build …`` asks ``request``; every other turn says what the agent read."""

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("build"):
            return asking(request)
        kind = turn.response.response_kind if turn.response else "request"
        return TurnOutput(replies=[f"{kind}: {turn.text}"])

    return script


async def asked(store: Store, make_gateway, request, **config):
    runner = ScriptedRunner(ask_on_build(request))
    gateway, chat = await make_gateway(store, runner, **config)
    await chat.say("build me an app", name="Ann")
    await gateway.drain()
    return runner, gateway, chat


# --- Cancel: the button and the command ---------------------------------------------------------


async def test_the_cancel_button_closes_the_question_and_the_agent_is_told_it_was_declined(
    store: Store, make_gateway
):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)
    assert chat.buttons() == ["React", "Vue", "Other…", "Cancel"]

    outcome = await chat.cancel()
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED
    assert outcome.answered_line == "✖ Cancelled by u1"  # the adapter puts this on the question
    declined = runner.calls[-1]
    assert declined.response.response_kind == "declined" and declined.response.reason == "cancelled"
    assert declined.text.startswith('For your clarification "Which framework?", I declined to answer.')
    assert declined.thread_id == runner.calls[0].thread_id
    assert chat.texts()[-1].startswith("declined: For your clarification")
    late = await chat.click(0)
    await gateway.drain()
    assert late.status is AnswerStatus.ALREADY_ANSWERED and late.message == "u1 cancelled this question."
    assert len(runner.calls) == 2


async def test_cancel_by_command_closes_the_question_for_everyone(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)

    await chat.reply("/cancel")
    await gateway.drain()

    closed = chat.closed()
    assert [c.answered_line for c in closed] == ["✖ Cancelled by u1"]
    assert closed[0].view.request.request_id == FRAMEWORK.request_id
    assert "✖ Cancelled the question “Which framework?”" in chat.texts()[-2]
    assert runner.calls[-1].response.response_kind == "declined"
    assert chat.texts()[-1].startswith("declined: ")
    assert (await chat.click(1)).message == "u1 cancelled this question."


async def test_a_form_can_be_cancelled(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, PROJECT_FORM)
    assert chat.buttons() == ["Fill in", "Cancel"]

    outcome = await chat.cancel()
    await gateway.drain()

    assert outcome.accepted and runner.calls[-1].response.response_kind == "declined"
    assert runner.calls[-1].response.values is None


async def test_cancel_with_nothing_open_says_so_and_runs_nothing(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("/cancel")
    await gateway.drain()

    assert chat.texts() == ["There is no open question to cancel."]
    assert runner.calls == []


async def test_only_the_asked_person_may_cancel(store: Store, make_gateway):
    runner = ScriptedRunner(ask_on_build(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("build it", user="ann", name="Ann", **room)
    await gateway.drain()

    await chat.say("/cancel", user="bob", **room)
    refused = await chat.cancel(user="bob")
    await gateway.drain()

    note = chat.sent[-1][1]
    assert note.text == "Only Ann can cancel this question; it stays open. Your own requests still go ahead."
    assert note.private_to == Sender(user_id="bob")
    assert refused.status is AnswerStatus.NOT_ALLOWED
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"
    assert len(runner.calls) == 1


# --- Cancel on a graph's own interrupt, whose schema may refuse the declined answer ------------

STOPPED = {
    "en": "The task this question was part of has stopped: it cannot go on without an answer. Send a "
    "new message to start again.",
    "zh": "这个问题所属的任务已停止：没有答案无法继续。如需重新开始，请发送新消息。",
}


def graph_interrupt(refuses: bool, locale: str = "en"):
    """Asks a graph's own ``interrupt()``, then refuses its declined answer (as a typed one may) or not."""
    question = choice_request("Book the trip?", ["Yes"], "interrupt:int-1").model_copy(
        update={"locale": locale}
    )

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None:
            return asking(question)
        return TurnOutput(dismissed=True) if refuses else TurnOutput(replies=["Going on without it."])

    return script


@pytest.mark.parametrize(
    ("refuses", "locale", "said"),
    [
        (True, "en", ["✖ Cancelled the question “Book the trip?”", STOPPED["en"]]),
        (True, "zh", ["✖ 已取消问题「Book the trip?」", STOPPED["zh"]]),
        (False, "en", ["✖ Cancelled the question “Book the trip?”", "Going on without it."]),
    ],
)
async def test_cancel_command_on_a_graphs_interrupt_answers_at_once_then_says_a_refused_task_stopped(
    store: Store, make_gateway, refuses: bool, locale: str, said: list[str]
):
    gateway, chat = await make_gateway(store, ScriptedRunner(graph_interrupt(refuses, locale)))
    await chat.say("book a trip")
    await gateway.drain()
    await chat.say("/cancel")
    await gateway.drain()
    assert chat.texts() == said  # no promise to go on at once; then what the run showed


async def test_a_cancel_click_the_graph_refuses_says_only_that_the_task_stopped(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner(graph_interrupt(refuses=True)))
    await chat.say("book a trip")
    await gateway.drain()
    assert (await chat.cancel()).answered_line == "✖ Cancelled by u1"  # the question's message says it
    await gateway.drain()
    assert chat.texts() == [STOPPED["en"]]


# --- a typed message while a question is open -------------------------------------------------


async def test_a_new_request_while_a_choice_is_open_runs_as_a_request_and_closes_the_question(
    store: Store, make_gateway
):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)

    await chat.reply("create a project")
    await gateway.drain()

    assert runner.calls[-1].text == "create a project" and runner.calls[-1].response is None
    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: u1 sent a new message instead"]
    late = await chat.click(0)
    await gateway.drain()
    assert late.message == "This question was closed when u1 sent a new message."
    assert len(runner.calls) == 2


async def test_an_option_number_or_label_still_answers(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)

    await chat.reply("vue")
    await gateway.drain()

    assert runner.calls[-1].response.option_id == "option-2"
    assert [c.answered_line for c in chat.closed()] == ["✅ Answered by u1: Vue"]


async def test_form_lines_answer_a_form_and_anything_else_is_a_new_request(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, PROJECT_FORM)

    await chat.reply("db: sqlite")  # a form line, with the required name missing: asked again
    await gateway.drain()
    assert len(runner.calls) == 1 and "Project name" in chat.texts()[-1]

    await chat.reply("delete the test data")
    await gateway.drain()
    assert runner.calls[-1].text == "delete the test data" and runner.calls[-1].response is None
    assert chat.closed()[-1].answered_line == "✖ Closed: u1 sent a new message instead"


async def test_a_form_answered_by_typed_lines(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, PROJECT_FORM)

    await chat.reply("Project name: shop\ndb: 2")
    await gateway.drain()

    assert runner.calls[-1].response.values == {"name": "shop", "db": "sqlite"}


async def test_a_free_text_question_takes_any_text(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FREE)

    await chat.reply("create a project")
    await gateway.drain()

    assert runner.calls[-1].response.response_kind == "text"
    assert runner.calls[-1].response.value == "create a project"


async def test_commands_are_never_answers(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FREE)

    for command in ("/help", "/status", "/start", "/help@clarigate_bot"):
        await chat.reply(command)
    await gateway.drain()

    assert len(runner.calls) == 1
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"


# --- /new closes what is open ------------------------------------------------------------------


async def test_new_closes_an_open_form_and_late_answers_say_the_conversation_restarted(
    store: Store, make_gateway
):
    runner, gateway, chat = await asked(store, make_gateway, PROJECT_FORM)
    old_thread = runner.calls[0].thread_id

    await chat.reply("/new")
    await gateway.drain()
    late = await chat.submit({"name": "shop"})
    await chat.reply("hello again")
    await gateway.drain()

    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: u1 started a new conversation"]
    assert late.status is AnswerStatus.ALREADY_ANSWERED
    assert late.message == (
        "This conversation was restarted, so this question is closed. Send your request again."
    )
    assert [(c.text, c.response) for c in runner.calls[1:]] == [("hello again", None)]
    assert runner.calls[1].thread_id != old_thread


async def test_an_older_question_of_the_old_thread_says_restarted(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)
    older = chat.last_request()
    # a second question on the same thread (asked while the first stayed open) takes its place
    record = await store.get_pending(older.request.request_id)
    assert record is not None
    newer = choice_request("Which database?", ["PostgreSQL", "SQLite"])
    await store.save_pending(record.model_copy(update={"request": newer, "token": "tok-newer"}))

    await chat.reply("/new")
    await gateway.drain()
    late = await chat.click(0, token=older.token)
    await gateway.drain()

    assert [c.view.request.question for c in chat.closed()] == ["Which database?"]
    assert late.status is AnswerStatus.EXPIRED
    assert late.message.startswith("This conversation was restarted")
    assert len(runner.calls) == 1


async def test_an_answer_claimed_just_before_new_is_not_run_into_the_new_conversation(
    store: Store, make_gateway
):
    runner = ScriptedRunner(ask_on_build(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner, start=False)  # workers wait: /new stays queued
    conv = chat.conversation()
    thread_id = await store.thread_for_chat(conv.thread_key, 3600)
    now = time.time()
    record = PendingRecord(
        request=FRAMEWORK,
        token="tok-before-new",
        thread_id=thread_id,
        conversation=conv,
        asked_by=Sender(user_id="u1"),
        created_at=now - 5,
        expires_at=now + 3600,
    )
    await store.save_pending(record)
    await chat.send(conv, ClarificationOut(request=FRAMEWORK, fallback_text="?", token=record.token))

    await chat.say("/new")
    clicked = await chat.click(1)  # claimed before /new ran: its run is queued after /new
    await gateway.start()
    await gateway.drain()

    assert clicked.accepted
    assert runner.calls == []
    assert chat.texts()[-1] == (
        "That answer was for the conversation before it was restarted, so I did not pass it on."
    )


async def test_after_other_a_typed_free_answer_is_the_answer(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)
    view = await gateway.pending_by_token(chat.last_request().token)

    # "Other…" (Telegram's ForceReply prompt): the adapter asks may_answer, then the person types
    assert await gateway.may_answer(view, Sender(user_id="u1")) is None
    await chat.reply("Svelte, please")
    await gateway.drain()

    assert runner.calls[-1].response.response_kind == "text"
    assert runner.calls[-1].response.value == "Svelte, please"
    assert [c.answered_line for c in chat.closed()] == ["✅ Answered by u1: Svelte, please"]


async def test_words_typed_long_after_other_are_a_new_request(store: Store, make_gateway, monkeypatch):
    # "Other…" chosen and its box closed unused: days later a request must not become the answer
    monkeypatch.setattr(answering, "ANSWERING_SECONDS", 1)
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)
    view = await gateway.pending_by_token(chat.last_request().token)
    assert await gateway.may_answer(view, Sender(user_id="u1")) is None
    await asyncio.sleep(2.1)
    await chat.say("deploy the docs site")
    await gateway.drain()

    assert runner.calls[-1].response is None and runner.calls[-1].text == "deploy the docs site"
    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: u1 sent a new message instead"]


async def test_someone_refused_at_other_does_not_turn_their_words_into_an_answer(store: Store, make_gateway):
    runner = ScriptedRunner(ask_on_build(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("build it", user="ann")
    await gateway.drain()
    view = await gateway.pending_by_token(chat.last_request().token)
    await chat.cancel(user="ann")
    await gateway.drain()

    assert await gateway.may_answer(view, Sender(user_id="bob")) is not None  # closed: no intent kept
    await chat.say("create a project", user="bob")
    await gateway.drain()
    assert runner.calls[-1].text == "create a project" and runner.calls[-1].response is None


async def test_cancel_and_an_answer_racing_give_one_run(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)

    first = await chat.cancel(event_id="tap")
    again = await chat.cancel(event_id="tap")  # the platform redelivers the tap
    click = await chat.click(0)
    await gateway.drain()

    assert [first.status, again.status, click.status] == [
        AnswerStatus.ACCEPTED,
        AnswerStatus.DUPLICATE,
        AnswerStatus.ALREADY_ANSWERED,
    ]
    assert len(runner.calls) == 2


async def test_a_chinese_question_is_cancelled_in_chinese(store: Store, make_gateway):
    question = choice_request("用哪个数据库？", ["PostgreSQL", "SQLite"]).model_copy(update={"locale": "zh"})
    runner, gateway, chat = await asked(store, make_gateway, question)

    await chat.reply("/cancel")
    await gateway.drain()

    assert chat.closed()[-1].answered_line == "✖ u1 已取消"
    assert "✖ 已取消问题「用哪个数据库？」" in chat.texts()[-2]
    assert runner.calls[-1].text.startswith("对于您的澄清问题「用哪个数据库？」，我选择不回答。")


async def test_after_fill_in_a_new_request_is_still_a_new_request(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, PROJECT_FORM)
    view = await gateway.pending_by_token(chat.last_request().token)

    assert await gateway.may_answer(view, Sender(user_id="u1")) is None  # "Fill in", then a change of mind
    await chat.reply("delete the test data")
    await gateway.drain()

    assert runner.calls[-1].text == "delete the test data" and runner.calls[-1].response is None
