"""A sticker, a place, a contact, a forwarded story, a game or an invoice sent alone over the
person's open question neither answers nor closes it: they are told it is still open, the agent
does not run, and its buttons still answer it. With no question open such a message goes to the
agent, told what came."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import redis_store
from .harness import TelegramBench, callback_update, command_update, message_update

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
STILL_OPEN = (
    "The question “Which framework?” is still open, so I set that message aside: please answer it first."
)

#: ``Message`` fields as the Bot API documents them (Sticker, Location, Contact, Story, Game, Invoice).
STICKER = {
    "file_id": "CAACAgIAAxkBAAIB",
    "file_unique_id": "AgADxQ",
    "type": "regular",
    "width": 512,
    "height": 512,
    "is_animated": False,
    "is_video": False,
    "emoji": "👍",
}
NEWS = {"id": -1001987654321, "type": "channel", "title": "Clarigate News", "username": "clarigate_news"}
GAME_PHOTO = {"file_id": "AgACAgIAAxkBAAIC", "file_unique_id": "AQADwq", "width": 640, "height": 360}
SENT_ALONE: dict[str, dict[str, Any]] = {
    "sticker": {"sticker": STICKER},
    "location": {"location": {"latitude": 52.520008, "longitude": 13.404954}},
    "contact": {"contact": {"phone_number": "+4930123456", "first_name": "Bob", "user_id": 222}},
    # a channel's story forwarded to the bot
    "story": {
        "story": {"chat": NEWS, "id": 42},
        "forward_origin": {"type": "channel", "chat": NEWS, "message_id": 42, "date": 1767225600},
    },
    "game": {
        "game": {"title": "Lumberjack", "description": "Chop as many logs as you can", "photo": [GAME_PHOTO]}
    },
    "invoice": {
        "invoice": {
            "title": "Pro plan",
            "description": "One month of Pro",
            "start_parameter": "pro-month",
            "currency": "USD",
            "total_amount": 1450,
        }
    },
}
#: What the agent is told of each when no question is open.
DESCRIBED = {
    "story": "(attached: story from Clarigate News)",
    "game": "(attached: game: Lumberjack)",
    "invoice": "(attached: invoice: Pro plan, 1450 in the smallest unit of USD)",
}


def script(turn: Turn) -> TurnOutput:
    """``deploy`` asks which framework; anything else says what the agent got."""
    if turn.response is None and "deploy" in turn.text:
        return asking(FRAMEWORK)
    return TurnOutput(replies=[f"Got: {turn.response.value if turn.response else turn.text}"])


async def asked(bench, **kw: Any) -> tuple[TelegramBench, ScriptedRunner]:
    runner = ScriptedRunner(script)
    tg = await bench(runner, **kw)
    await tg.deliver(message_update("deploy the app"))
    tg.new_calls()
    return tg, runner


@pytest.mark.parametrize("kind", sorted(SENT_ALONE))
async def test_sent_alone_while_a_question_is_open_it_stays_open_and_the_person_is_told(bench, kind):
    tg, runner = await asked(bench)

    await tg.deliver(message_update(None, **SENT_ALONE[kind]))

    calls = tg.new_calls()
    assert [c.method for c in calls] == ["sendMessage"]  # one reply; the question's message untouched
    assert calls[0].params["text"] == STILL_OPEN
    assert len(runner.calls) == 1  # the agent saw nothing of it
    pending = await tg.gateway.store.pending_for_thread(runner.calls[0].thread_id)
    assert pending is not None and pending.status == "pending"

    vue = next(c for c in tg.api.of("sendMessage") if c.buttons).buttons[0][1]["callback_data"]
    await tg.deliver(callback_update(vue, 1000))  # the question still takes its answer
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Vue"
    assert tg.api.of("sendMessage")[-1].params["text"] == "Got: Vue"


async def test_a_sticker_with_no_question_open_goes_to_the_agent_as_before(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)

    await tg.deliver(message_update(None, sticker=STICKER))

    assert [c.text for c in runner.calls] == ["(attached: sticker 👍)"]
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["Got: (attached: sticker 👍)"]


@pytest.mark.parametrize("kind", sorted(DESCRIBED))
async def test_a_story_game_or_invoice_with_no_question_open_is_described_to_the_agent(bench, kind):
    runner = ScriptedRunner(script)
    tg = await bench(runner)

    await tg.deliver(message_update(None, **SENT_ALONE[kind]))

    assert [c.text for c in runner.calls] == [DESCRIBED[kind]]
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == [f"Got: {DESCRIBED[kind]}"]


async def test_on_redis_the_question_is_still_pending_and_cancel_still_closes_it(bench, redis_prefix):
    store = redis_store(redis_prefix)
    try:
        tg, runner = await asked(bench, store=store)
        await tg.deliver(message_update(None, **SENT_ALONE["location"]))
        record = await store.pending_for_thread(runner.calls[0].thread_id)
        assert record is not None and record.status == "pending"

        await tg.deliver(command_update("/cancel"))  # commands keep working on the open question
        said = [c.params["text"] for c in tg.api.of("sendMessage")]
        assert any(text.startswith("✖ Cancelled the question “Which framework?”") for text in said)
        assert await store.pending_for_thread(runner.calls[0].thread_id) is None
    finally:
        await store.close()


async def test_a_photo_alone_still_runs_and_closes_the_question(bench):
    tg, runner = await asked(bench)
    photo = [{"file_id": "p1", "file_unique_id": "up1", "width": 90, "height": 90, "file_size": 900}]

    await tg.deliver(message_update(None, photo=photo))

    assert len(runner.calls) == 2 and "photo.jpg" in runner.calls[-1].text
    assert await tg.gateway.store.pending_for_thread(runner.calls[0].thread_id) is None
