"""``/ask@thisbot …`` is a new request, never the answer to a question or form still open: the
question's message says it closed ("sent a new message instead") and the agent reads the words as
a request. Before, a free-text question took them as its answer ("For your clarification "Which
log file?", my answer is: summarize the logs"), while a choice question closed. Real
python-telegram-bot against the fake Bot API; documented updates with a ``bot_command`` entity."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request, text_request

from .conftest import redis_store
from .harness import ALICE, GROUP, bot_message, command_update, mention_update, message_update, private_chat
from .test_choices import ask_then_echo
from .test_form_details import open_form

QUESTIONS = [text_request("Which log file?"), choice_request("Which log file?", ["app.log", "db.log"])]


def asked_in(tg) -> tuple[int, str]:
    """The question's message: its id and what it shows now."""
    message_id = tg.api.of("sendMessage")[-1].result["message_id"]
    return message_id, tg.api.messages[(GROUP["id"], message_id)][0]


def ran_as_request(runner) -> None:
    ran = runner.calls[-1]
    assert ran.response is None and ran.text == "summarize the logs"
    assert ran.thread_id == runner.calls[0].thread_id


@pytest.mark.parametrize("question", QUESTIONS, ids=["text", "choice"])
async def test_ask_in_a_forum_topic_closes_the_open_question_and_runs(bench, redis_prefix, question):
    runner = ScriptedRunner(ask_then_echo(question))
    tg = await bench(runner, store=redis_store(redis_prefix))
    await tg.deliver(mention_update("deploy", ALICE, thread_id=77))
    asked, _ = asked_in(tg)

    await tg.deliver(command_update("/ask@clari_bot summarize the logs", ALICE, chat=GROUP, thread_id=77))
    await tg.settle()
    ran_as_request(runner)
    shown = tg.api.messages[(GROUP["id"], asked)][0]
    assert "✖ Closed: Alice sent a new message instead" in shown
    assert tg.api.of("sendMessage")[-1].params["text"] == "Going with <b>summarize the logs</b>."


@pytest.mark.parametrize("question", QUESTIONS, ids=["text", "choice"])
async def test_ask_in_a_groups_reply_chain_closes_the_open_question_and_runs(bench, redis_prefix, question):
    runner = ScriptedRunner(ask_then_echo(question))
    tg = await bench(runner, store=redis_store(redis_prefix))
    await tg.deliver(mention_update("deploy", ALICE))
    asked, _ = asked_in(tg)

    reply_to = bot_message(asked, GROUP)
    await tg.deliver(
        command_update("/ask@clari_bot summarize the logs", ALICE, chat=GROUP, reply_to=reply_to)
    )
    await tg.settle()
    ran_as_request(runner)
    assert "✖ Closed: Alice sent a new message instead" in tg.api.messages[(GROUP["id"], asked)][0]


async def test_a_reply_without_ask_still_answers_a_free_text_question(bench, redis_prefix):
    runner = ScriptedRunner(ask_then_echo(QUESTIONS[0]))
    tg = await bench(runner, store=redis_store(redis_prefix))
    await tg.deliver(mention_update("deploy", ALICE, thread_id=77))
    asked, _ = asked_in(tg)

    reply_to = bot_message(asked, GROUP)
    await tg.deliver(message_update("summarize the logs", ALICE, GROUP, reply_to=reply_to, thread_id=77))
    ran = runner.calls[-1]
    assert ran.response is not None and ran.response.value == "summarize the logs"


async def test_ask_in_reply_to_an_open_form_closes_it_and_is_no_step_value(bench):
    tg, runner, form = await open_form(bench)
    await tg.deliver(
        command_update("/ask summarize the logs", reply_to=bot_message(form.message_id, private_chat(ALICE)))
    )
    await tg.settle()
    assert "✖ Closed" in form.text and "4/6" not in form.text
    assert runner.calls[-1].response is None and runner.calls[-1].text == "summarize the logs"
