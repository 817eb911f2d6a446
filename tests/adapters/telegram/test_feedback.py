"""👍/👎 under a final answer: an inline keyboard, one vote per person and answer, on both stores."""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import redis_store
from .harness import ALICE, BOB, GROUP, callback_update, mention_update, message_update, private_chat

QUESTION = choice_request("Which framework?", ["React", "Vue"])


def ask_then_answer(turn: Turn) -> TurnOutput:
    """Asks first; the answer to the question gets the final answer."""
    if turn.response is None and "deploy" in turn.text:
        return asking(QUESTION)
    return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}."])


def votes_counted(vote: str, name: str = "clarigate_feedback_total") -> float:
    """The votes counted so far on Telegram (the counters live for the whole test process)."""
    return REGISTRY.get_sample_value(name, {"platform": "telegram", "vote": vote}) or 0.0


def vote_data(call) -> dict[str, str]:
    """The 👍/👎 keyboard of a sendMessage call, by label: the callback data."""
    return {b["text"]: b["callback_data"] for row in call.buttons for b in row if b["text"] in "👍👎"}


def last_message(api, chat_id: int) -> tuple[int, str, dict[str, str]]:
    """The chat's latest message as people see it: its id, its text, its 👍/👎 (by label)."""
    (_, message_id), (text, markup) = max((k, v) for k, v in api.messages.items() if k[0] == chat_id)
    rows = json.loads(markup or "{}").get("inline_keyboard", [])
    return (
        message_id,
        text,
        {b["text"]: b["callback_data"] for row in rows for b in row if b["text"] in "👍👎"},
    )


async def test_the_votes_sit_under_the_final_answer_only(bench):
    tg = await bench(ScriptedRunner(ask_then_answer))
    await tg.deliver(message_update("deploy the app"))
    question = tg.api.of("sendMessage")[-1]
    assert "Which framework?" in question.params["text"] and not vote_data(question)
    option = question.buttons[0][0]["callback_data"]
    await tg.deliver(callback_update(option, int(question.result["message_id"])))
    _, text, votes = last_message(tg.api, ALICE["id"])
    assert text == "Going with React."
    assert set(votes) == {"👍", "👎"}
    assert all(len(data.encode()) <= 64 for data in votes.values())


async def test_an_error_gets_no_votes(bench):
    def failing(turn: Turn) -> TurnOutput:
        raise RuntimeError("the model is down")

    tg = await bench(ScriptedRunner(failing))
    await tg.deliver(message_update("hello"))
    sent = tg.api.of("sendMessage")
    assert sent and all(not vote_data(call) for call in sent)
    assert not tg.api.of("editMessageReplyMarkup")


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
async def test_one_vote_per_person_a_second_click_changes_it(bench, redis_prefix, store_kind):
    store = redis_store(redis_prefix) if store_kind == "redis" else None
    try:
        tg = await bench(store=store)
        await tg.deliver(mention_update("hello", ALICE, GROUP))
        message_id, _, votes = last_message(tg.api, GROUP["id"])
        token = votes["👍"].split("|")[0]
        up, down = votes_counted("up"), votes_counted("down")
        withdrawn = votes_counted("up", "clarigate_feedback_withdrawn_total")

        await tg.deliver(callback_update(votes["👍"], message_id, ALICE, GROUP))
        assert tg.api.of("answerCallbackQuery")[-1].params["text"] == "Thanks for the feedback."
        await tg.deliver(callback_update(votes["👍"], message_id, ALICE, GROUP))  # the same again
        assert votes_counted("up") == up + 1
        assert await tg.gateway.store.votes_on(token) == {str(ALICE["id"]): "up"}

        await tg.deliver(callback_update(votes["👎"], message_id, ALICE, GROUP))  # changed her mind
        assert tg.api.of("answerCallbackQuery")[-1].params["text"] == "Feedback changed."
        assert votes_counted("down") == down + 1
        assert votes_counted("up", "clarigate_feedback_withdrawn_total") == withdrawn + 1
        await tg.deliver(callback_update(votes["👍"], message_id, BOB, GROUP))  # another person
        assert await tg.gateway.store.votes_on(token) == {str(ALICE["id"]): "down", str(BOB["id"]): "up"}
        assert votes_counted("up") == up + 2
        if store_kind == "redis":  # what Redis holds: one field per person, with an expiry
            held = await store._command("HGETALL", f"{redis_prefix}:votes:{token}")
            assert set(held[::2]) == {str(ALICE["id"]), str(BOB["id"])}
            assert await store._command("TTL", f"{redis_prefix}:votes:{token}") > 0
    finally:
        if store is not None:
            await store.close()


async def test_a_vote_on_an_unknown_answer_is_told_it_expired(bench):
    tg = await bench()
    await tg.deliver(callback_update("no-such-answer|+1", 77, ALICE, private_chat(ALICE)))
    answered = tg.api.of("answerCallbackQuery")[-1].params
    assert answered["text"] == "This answer can no longer be rated." and answered["show_alert"] == "true"
