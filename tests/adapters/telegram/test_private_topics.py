"""Topics in a private chat with the bot (its threaded mode, Bot API 9.3): each topic is a
conversation of its own, as a forum topic is, and whatever the bot says there (replies, questions,
command answers, "typing…", streamed drafts, form steps) lands in that topic. The chat's part
outside any topic stays one conversation, as a private chat without topics is.

Messages in a topic come as Telegram sends them: ``message_thread_id`` and ``is_topic_message``,
and (as in a forum) the topic's creation as the message they reply to when they answer nothing.
"""

from __future__ import annotations

import time
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from tests.gateway.flow.test_streaming import StreamingRunner, words

from .harness import (
    ALICE,
    BOB,
    GROUP,
    bot_message,
    command_update,
    mention_update,
    message_update,
    private_chat,
)
from .test_choices import ask_then_echo, clarification_call
from .test_form_details import Form, script

DEPLOYS, DOCS = 11, 12  # two topics Alice opened in her chat with the bot (their creation messages)
TOPIC_NAMES = {DEPLOYS: "Deploys", DOCS: "Docs"}


def topic_created(topic: int) -> dict[str, Any]:
    """The service message that opened ``topic`` (its id is the topic's ``message_thread_id``)."""
    return {
        "message_id": topic,
        "date": int(time.time()),
        "chat": private_chat(ALICE),
        "from": ALICE,
        "message_thread_id": topic,
        "is_topic_message": True,
        "forum_topic_created": {"name": TOPIC_NAMES[topic], "icon_color": 7322096},
    }


def in_topic(text: str, topic: int) -> dict[str, Any]:
    """Alice's message in ``topic`` of her private chat with the bot."""
    return message_update(text, ALICE, thread_id=topic, reply_to=topic_created(topic))


def where(calls: list[Any], method: str = "sendMessage") -> list[tuple[str, str | None]]:
    """(text, topic) of each call of ``method``: the topic is None outside any topic."""
    return [
        (str(c.params.get("text", "")), c.params.get("message_thread_id"))
        for c in calls
        if c.method == method
    ]


async def test_two_topics_are_two_conversations_answered_in_their_topic(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(in_topic("deploy the api", DEPLOYS))
    await tg.deliver(in_topic("where are the docs?", DOCS))
    await tg.deliver(in_topic("and the worker", DEPLOYS))
    await tg.deliver(message_update("hi"))  # outside any topic: the chat as it always was
    await tg.deliver(message_update("again"))
    deploys, docs, deploys_again, general, general_again = (c.thread_id for c in runner.calls)
    assert deploys == deploys_again and general == general_again
    assert len({deploys, docs, general}) == 3
    assert where(tg.api.calls) == [
        ("You said: deploy the api", "11"),
        ("You said: where are the docs?", "12"),
        ("You said: and the worker", "11"),
        ("You said: hi", None),
        ("You said: again", None),
    ]
    assert all("reply_parameters" not in c.params for c in tg.api.of("sendMessage"))
    typing = [topic for _, topic in where(tg.api.calls, "sendChatAction")]
    assert typing == ["11", "12", "11", None, None]


async def test_a_topics_question_leaves_the_other_topic_free_and_commands_answer_where_asked(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(in_topic("deploy the app", DEPLOYS))
    asked = clarification_call(tg)
    assert asked.params["message_thread_id"] == "11"
    tg.new_calls()

    await tg.deliver(in_topic("summarize the guide", DOCS))  # a request of its own, no answer
    docs_turn = runner.calls[-1]
    assert docs_turn.text == "summarize the guide" and docs_turn.response is None
    assert docs_turn.thread_id != runner.calls[0].thread_id
    assert where(tg.new_calls()) == [("Going with <b>summarize the guide</b>.", "12")]

    for command in ("/status", "/help", "/new"):
        await tg.deliver(command_update(command, thread_id=DOCS))
    await tg.deliver(command_update("/status", thread_id=DEPLOYS))
    docs_status, docs_help, docs_new, deploys_status = where(tg.new_calls())
    assert docs_status[1] == docs_help[1] == docs_new[1] == "12"
    assert "Which framework?" not in docs_status[0] and docs_new[0].startswith("Started a new conversation")
    assert "Which framework?" in deploys_status[0] and deploys_status[1] == "11"
    assert tg.api.of("editMessageText") == []  # /new in Docs left the question of Deploys open

    await tg.deliver(in_topic("2", DEPLOYS))
    answered = runner.calls[-1]
    assert answered.response is not None and answered.response.option_id == "option-2"
    assert answered.thread_id == runner.calls[0].thread_id
    assert "✅ Answered" in tg.api.of("editMessageText")[-1].params["text"]
    assert where(tg.new_calls())[-1] == ("Going with <b>Vue</b>.", "11")

    await tg.deliver(in_topic("deploy it again", DEPLOYS))
    await tg.deliver(command_update("/cancel", thread_id=DEPLOYS))
    asked_again, cancelled, went_on = where(tg.new_calls())
    assert cancelled[0].startswith("✖ Cancelled the question") and went_on[0].endswith(
        "(declined to answer)</b>."
    )
    assert asked_again[1] == cancelled[1] == went_on[1] == "11"


async def test_a_streamed_answer_is_drafted_in_its_topic(bench):
    answer = "Found it in the guide, under Deploying."
    tg = await bench(StreamingRunner(words(answer, 0.3), TurnOutput(replies=[answer])))
    await tg.deliver(in_topic("where is it documented?", DOCS))
    drafts = tg.api.of("sendMessageDraft")
    assert drafts and {d.params.get("message_thread_id") for d in drafts} == {"12"}
    assert where(tg.api.calls) == [(answer, "12")]
    assert tg.api.visible_drafts(ALICE["id"]) == []  # the reply replaced the topic's draft


async def test_a_form_keeps_its_typed_values_while_another_topic_talks(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(in_topic("deploy", DEPLOYS))
    asked = clarification_call(tg)
    assert asked.params["message_thread_id"] == "11"
    form = Form(tg, asked.result["message_id"], DEPLOYS)
    for action in ("form", "s1", "d", "y"):
        await form.tap(action)
    assert "4/6 · Replicas" in form.text

    await tg.deliver(in_topic("what changed?", DOCS))  # no value of the form of Deploys
    assert runner.calls[-1].text == "what changed?"
    assert where(tg.api.of("sendMessage"))[-1] == ("You said: what changed?", "12")
    await tg.deliver(in_topic("3", DEPLOYS))  # the agent spoke elsewhere: still the form's value
    assert "5/6 · Deadline" in form.text
    assert [c.text for c in runner.calls] == ["deploy", "what changed?"]


async def test_a_message_in_general_naming_its_thread_is_outside_any_topic(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("hi"))
    await tg.deliver(message_update("again", thread_id=1))  # General's id: sends there name no topic
    assert runner.calls[0].thread_id == runner.calls[1].thread_id
    assert where(tg.api.calls) == [("You said: hi", None), ("You said: again", None)]


async def test_a_reply_in_a_forums_general_naming_its_thread_stays_in_its_reply_chain(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(mention_update("summarize the logs"))
    answer = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    await tg.deliver(message_update("and the errors?", BOB, GROUP, reply_to=answer, thread_id=1))
    assert runner.calls[0].thread_id == runner.calls[1].thread_id
    assert [c.params.get("message_thread_id") for c in tg.api.of("sendMessage")] == [None, None]
