"""Taps are answered first; what follows a tap never fails the update."""

from __future__ import annotations

import asyncio

import pytest

from clarigate.adapters.telegram import deferred
from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.gateway.store.memory import MemoryStore

from .conftest import redis_store
from .harness import ALICE, callback_update, message_update, open_bench
from .test_choices import ask_then_echo, clarification_call


async def asked(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the app"))
    data = [b["callback_data"] for row in clarification_call(tg).buttons for b in row]
    tg.new_calls()
    return tg, runner, data


async def test_a_flood_wait_on_the_edit_neither_holds_the_tap_nor_fails_the_webhook(bench):
    tg, runner, data = await asked(bench)
    tg.api.fail_next("editMessageText", 429, retry_after=1)
    response = await tg.post(callback_update(data[1], 1000))
    assert response.status_code == 200
    calls = tg.new_calls()
    assert [c.method for c in calls][:2] == ["answerCallbackQuery", "editMessageText"]
    assert calls[0].params["text"] == "Answer received."
    await tg.settle()  # the edit comes once Telegram's wait is over
    edits = [c for c in tg.new_calls() if c.method == "editMessageText"]
    assert len(edits) == 1 and "✅ Answered by Alice: Vue" in edits[0].params["text"]
    assert tg.api.messages[(ALICE["id"], 1000)][0] == edits[0].params["text"]
    assert runner.calls[-1].response.option_id == "option-2"


async def test_a_tap_on_a_deleted_message_is_accepted_and_answers_200(bench):
    tg, runner, data = await asked(bench)
    tg.api.delete(ALICE["id"], 1000)
    response = await tg.post(callback_update(data[0], 1000))
    assert response.status_code == 200
    await tg.settle()
    calls = tg.new_calls()
    assert calls[0].method == "answerCallbackQuery" and calls[0].params["text"] == "Answer received."
    assert runner.calls[-1].response.option_id == "option-1"
    assert calls[-1].params["text"] == "Going with <b>React</b>."


async def test_a_tap_whose_query_is_too_old_still_answers_once(bench):
    tg, runner, data = await asked(bench)
    tap = callback_update(data[0], 1000)
    tg.api.expired_queries.add(tap["callback_query"]["id"])
    assert (await tg.post(tap)).status_code == 200
    await tg.settle()
    assert runner.calls[-1].response.option_id == "option-1"
    assert "✅ Answered by Alice: React" in tg.api.messages[(ALICE["id"], 1000)][0]


async def test_cancel_on_a_choice_question_is_a_decline_at_the_core(bench):
    tg, runner, data = await asked(bench)
    _, answers = tg.record()
    cancel = next(d for d in data if d.endswith("|x"))
    await tg.deliver(callback_update(cancel, 1000))
    assert [(a.decline, a.option_id, a.text, a.values) for a in answers] == [(True, None, None, None)]
    assert answers[0].sender.user_id == str(ALICE["id"])
    calls = tg.new_calls()
    assert calls[0].method == "answerCallbackQuery"


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_an_answered_edit_put_off_by_a_flood_wait_is_made_by_another_replica(
    bench, bot_api, monkeypatch, redis_prefix, kind
):
    # the replica that took the tap stops during Telegram's wait: the question must not keep its buttons
    monkeypatch.setattr(deferred, "SWEEP_SECONDS", 0.2)
    store = MemoryStore("put-off-edits") if kind == "memory" else redis_store(redis_prefix)
    try:
        runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
        first = await open_bench(bot_api, store, runner)
        await first.deliver(message_update("deploy the app"))
        question = clarification_call(first)
        data = [b["callback_data"] for row in question.buttons for b in row]
        bot_api.fail_next("editMessageText", 429, retry_after=2)
        assert (await first.post(callback_update(data[1], question.result["message_id"]))).status_code == 200
        [flooded] = bot_api.of("editMessageText")
        await first.close()  # a deploy: its background retry is cancelled
        second = await bench(ScriptedRunner(), store=store)
        where = (ALICE["id"], question.result["message_id"])
        for _ in range(400):  # the edit made, then forgotten (a step after it, on a busy machine later)
            shown = "✅ Answered by Alice: Vue" in bot_api.messages[where][0]
            if shown and await second.gateway.state.get_json(deferred.INDEX) is None:
                break
            await asyncio.sleep(0.05)
        flooded_wait, made = bot_api.of("editMessageText")  # made once
        assert "✅ Answered by Alice: Vue" in bot_api.messages[where][0] and flooded_wait is flooded
        assert made.at - flooded.at >= 2 * 0.95  # not inside Telegram's wait
        assert await second.gateway.state.get_json(deferred.INDEX) is None  # then forgotten
    finally:
        await store.close()
