"""A message with nothing the agent can read (no text; only a sticker, a place, a contact…) sent
over its writer's open question neither answers nor closes it: the writer is told the question is
still open, in its language, and nothing runs. With no question of theirs open, it runs as before
(the agent told what came)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Attachment
from clarigate.gateway.store.base import Store

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
APPROVAL = choice_request("Run delete_records?", ["Approve", "Edit"], request_id="clarification:approve")
STICKER = Attachment(kind="sticker", name="sticker 👍")
PLACE = Attachment(kind="other", name="location 52.52000, 13.40500")
ROOM = {"chat": "room", "topic": "t", "direct": False}
STILL_OPEN = "The question “{}” is still open, so I set that message aside: please answer it first."


def script_for(request):
    """``build`` asks ``request``; any other turn says what the agent read."""

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "build":
            return asking(request)
        return TurnOutput(replies=[f"read: {turn.text}"])

    return script


async def asked(store: Store, make_gateway, request, **where):
    runner = ScriptedRunner(script_for(request))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build", user="ann", name="Ann", **where)
    await gateway.drain()
    return runner, gateway, chat


async def test_a_sticker_leaves_the_question_open_and_says_so(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK)
    sent = len(chat.sent)

    await chat.say("", user="ann", attachments=[STICKER])
    await gateway.drain()

    assert len(chat.sent) == sent + 1  # one reply, nothing else
    assert chat.texts()[-1] == STILL_OPEN.format("Which framework?")
    assert len(runner.calls) == 1 and chat.closed() == []
    record = await store.pending_for_thread(runner.calls[0].thread_id)
    assert record is not None and record.status == "pending"
    await chat.say("2", user="ann")  # typed, the answer still counts
    await gateway.drain()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"


async def test_another_members_place_runs_as_theirs_and_leaves_the_question_open(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, FRAMEWORK, **ROOM)

    await chat.say("", user="bob", name="Bob", attachments=[PLACE], **ROOM)
    await gateway.drain()

    assert runner.calls[-1].text.endswith("\n\n(attached: location 52.52000, 13.40500)")  # Bob's own request
    assert chat.closed() == []
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"


async def test_an_approval_gets_the_one_reply(store: Store, make_gateway):
    runner, gateway, chat = await asked(store, make_gateway, APPROVAL)
    sent = len(chat.sent)

    await chat.say("", user="ann", attachments=[STICKER])
    await gateway.drain()

    assert len(chat.sent) == sent + 1 and chat.texts()[-1] == STILL_OPEN.format("Run delete_records?")
    assert len(runner.calls) == 1


async def test_the_reply_is_in_the_questions_language(store: Store, make_gateway):
    question = choice_request("用哪个框架？", ["React", "Vue"]).model_copy(update={"locale": "zh"})
    runner, gateway, chat = await asked(store, make_gateway, question)

    await chat.say("", user="ann", attachments=[STICKER])
    await gateway.drain()

    assert chat.texts()[-1] == "问题「用哪个框架？」仍在等待回答，因此这条消息未作处理：请先回答该问题。"
    assert len(runner.calls) == 1


async def test_with_no_question_open_a_sticker_runs_as_before(store: Store, make_gateway):
    runner = ScriptedRunner(script_for(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)

    await chat.say("", attachments=[STICKER])
    await gateway.drain()

    assert [c.text for c in runner.calls] == ["(attached: sticker 👍)"]
    assert chat.texts() == ["read: (attached: sticker 👍)"]


async def test_words_with_a_sticker_run_as_before(store: Store, make_gateway):
    runner = ScriptedRunner(script_for(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)

    await chat.say("what does this mean?", attachments=[STICKER])
    await gateway.drain()

    assert [c.text for c in runner.calls] == ["what does this mean?\n\n(attached: sticker 👍)"]
