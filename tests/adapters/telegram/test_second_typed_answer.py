"""With ``answer_policy: anyone``, two members type an answer to the same open question: the one
that comes second, written while the question was still open, is told it was already answered
(as a second tap is) and never reaches the agent as a request of its own."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .conftest import redis_store
from .harness import ALICE, BOB, GROUP, bot_message, command_update, message_update
from .test_choices import ask_then_echo

CAROL = {"id": 333, "is_bot": False, "first_name": "Carol"}


def sent_texts(calls) -> list[str]:
    return [c.params["text"] for c in calls if c.method == "sendMessage"]


async def test_a_second_typed_answer_is_told_the_question_was_answered(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, answer_policy="anyone")
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=GROUP))
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    carols = message_update("1", CAROL, GROUP, reply_to=question)  # written while it is open
    tg.new_calls()

    await tg.deliver(message_update("2", BOB, GROUP, reply_to=question))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"
    tg.new_calls()
    await tg.deliver(carols)
    assert len(runner.calls) == 2  # Carol's "1" is no request of its own
    assert sent_texts(tg.new_calls()) == ["Already answered by Bob."]


async def test_a_message_written_after_the_answer_is_a_request(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, answer_policy="anyone")
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=GROUP))
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    await tg.deliver(message_update("2", BOB, GROUP, reply_to=question))
    tg.new_calls()
    # not an answer to the question (neither an option's number nor its label): a request
    carols = message_update("what about the tests?", CAROL, GROUP, reply_to=question)
    await tg.deliver(carols)
    assert len(runner.calls) == 3 and runner.calls[-1].response is None


async def test_on_redis_the_answer_is_noted_and_read_with_no_round_trip_of_its_own(bench, redis_prefix):
    store = redis_store(redis_prefix)
    try:
        await _second_answer_on(store, bench)
    finally:
        await store.close()


async def _second_answer_on(store, bench) -> None:
    used: list[str] = []  # the state keys read or written on their own (a round trip each)
    get_json, set_json = store.get_json, store.set_json

    async def reading(key):
        used.append(key)
        return await get_json(key)

    async def writing(key, value, ttl):
        used.append(key)
        await set_json(key, value, ttl)

    store.get_json, store.set_json = reading, writing
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, store=store, answer_policy="anyone")
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=GROUP))
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    carols = message_update("1", CAROL, GROUP, reply_to=question)
    await tg.deliver(message_update("2", BOB, GROUP, reply_to=question))
    tg.new_calls()
    await tg.deliver(carols)
    assert len(runner.calls) == 2
    assert sent_texts(tg.new_calls()) == ["Already answered by Bob."]
    # the claim's script notes the answer, the message's lookup script reads it back
    assert [key for key in used if key.startswith("answered:")] == []
