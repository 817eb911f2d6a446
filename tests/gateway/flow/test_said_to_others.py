"""A message the adapter marks as said to others (``InboundMessage.said_to_others``: in a group's
thread it mentions people but not the bot) is ignored, with no reply, no run, and the thread's
open question left open; except when it is its writer's typed answer to that question (any text
to a free-text question, an option's number or label, anything after "Other…"), which counts as
if it named no one."""

from __future__ import annotations

import uuid

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn, asking, choice_request, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import InboundMessage, Sender
from clarigate.gateway.store.base import Store

WHO_REVIEWS = text_request("Who should review the release?", "clarification:who-1")
FRAMEWORK = choice_request("Which framework?", ["React", "Vue"], request_id="clarification:fw-1")
APPROVAL = choice_request("Run delete_records?", ["Approve", "Edit"], request_id="clarification:approve-1")
ROOM = {"chat": "room", "topic": "t", "direct": False}


def asks(request: HumanInputRequest):
    """The agent asks ``request`` on "build" and says what it read otherwise."""

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "build":
            return asking(request)
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.value}"])
        return TurnOutput(replies=[f"request: {turn.text}"])

    return script


async def to_others(chat: TestAdapter, text: str, user: str) -> None:
    """``text`` written in the room's thread, naming others but not the bot (as an adapter marks it)."""
    n = uuid.uuid4().hex[:12]
    message = InboundMessage(
        conversation=chat.conversation(ROOM["chat"], ROOM["topic"], direct=False),
        sender=Sender(user_id=user, display_name=user.title()),
        text=text,
        event_id=f"aside-{n}",
        message_id=f"aside-{n}",
        said_to_others=True,
    )
    await chat.gateway.accept(message)


async def bobs_question(store: Store, make_gateway, request: HumanInputRequest):
    runner = ScriptedRunner(asks(request))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    assert chat.last_request().request.request_id == request.request_id
    return runner, gateway, chat


async def test_the_askers_answer_naming_a_member_answers_a_free_text_question(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, WHO_REVIEWS)

    await to_others(chat, "ask @carol to review", "bob")
    await gateway.drain()

    assert [c.response.value for c in runner.calls if c.response] == ["ask @carol to review"]
    assert chat.texts("room")[-1] == "answer: ask @carol to review"
    assert [c.answered_line for c in chat.closed()] == ["✅ Answered by Bob: ask @carol to review"]
    assert (await store.get_pending(WHO_REVIEWS.request_id)).status == "answered"


async def test_the_answer_typed_after_other_may_name_a_member(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, FRAMEWORK)
    view = await gateway.pending_by_token(chat.last_request().token)
    assert await gateway.may_answer(view, Sender(user_id="bob")) is None  # Bob chose "Other…"

    await to_others(chat, "whatever @carol picks", "bob")
    await gateway.drain()

    assert [c.response.value for c in runner.calls if c.response] == ["whatever @carol picks"]
    assert (await store.get_pending(FRAMEWORK.request_id)).status == "answered"


async def test_talk_to_a_member_over_a_choice_is_ignored_and_closes_nothing(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, FRAMEWORK)
    sent = len(chat.sent)

    await to_others(chat, "@carol can you check the backups?", "bob")
    await gateway.drain()

    assert len(runner.calls) == 1 and len(chat.sent) == sent  # no run, not a word
    assert (await store.get_pending(FRAMEWORK.request_id)).status == "pending"
    await chat.say("2", user="bob", **ROOM)  # the question still takes Bob's answer
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["Vue"]


async def test_another_members_words_naming_someone_do_not_answer_or_run(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, WHO_REVIEWS)
    sent = len(chat.sent)

    await to_others(chat, "@carol", "alice")  # Bob's question is Bob's to answer
    await gateway.drain()

    assert len(runner.calls) == 1 and len(chat.sent) == sent
    assert (await store.get_pending(WHO_REVIEWS.request_id)).status == "pending"


async def test_an_approval_is_not_told_about_talk_to_others(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, APPROVAL)
    sent = len(chat.sent)

    await to_others(chat, "@carol should I approve this?", "bob")
    await to_others(chat, "/status @carol", "bob")  # a command naming others, not the bot: theirs too
    await gateway.drain()

    assert len(runner.calls) == 1 and len(chat.sent) == sent  # it closes nothing either
    assert (await store.get_pending(APPROVAL.request_id)).status == "pending"


async def test_talk_to_others_with_no_question_open_is_ignored(store: Store, make_gateway):
    runner, gateway, chat = await bobs_question(store, make_gateway, FRAMEWORK)
    await chat.click(0, user="bob")
    await gateway.drain()
    sent = len(chat.sent)

    await to_others(chat, "@carol React it is", "bob")
    await gateway.drain()

    assert len(runner.calls) == 2 and len(chat.sent) == sent
