"""👍/👎 under a final answer on Feishu: buttons at the foot of the answer's card, appended to a
streamed card once its stream is over; one vote per person and answer, on both stores."""

from __future__ import annotations

import json

from prometheus_client import REGISTRY

from clarigate.adapters.feishu.feedback import FEEDBACK_ELEMENT
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .cards import button, feedback_buttons, payload, text_of
from .events import card_action, message_event
from .fake_open_api import cardkit_kind

QUESTION = choice_request("Which framework?", ["React", "Vue"])


def ask_then_answer(turn: Turn) -> TurnOutput:
    """Asks first; the answer to the question gets the final answer."""
    if turn.response is None and "deploy" in turn.text:
        return asking(QUESTION)
    return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}."])


def votes_counted(vote: str, name: str = "clarigate_feedback_total") -> float:
    """The votes counted so far on Feishu (the counters live for the whole test process)."""
    return REGISTRY.get_sample_value(name, {"platform": "feishu", "vote": vote}) or 0.0


async def test_a_streamed_answer_gets_the_buttons_appended_once_its_stream_is_over(make_bot):
    bot = await make_bot(ScriptedRunner())
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    api = bot.api

    kinds = [cardkit_kind(c) for c in api.cardkit_calls()]
    assert kinds[0] == "create" and kinds[-3:] == ["settings", "update", "elements"]
    settings, added = api.cardkit_calls("settings")[-1], api.cardkit_calls("elements")[-1]
    assert json.loads(settings.body["settings"]) == {"config": {"streaming_mode": False}}  # first
    assert added.body["type"] == "append" and added.body["uuid"]
    [row] = json.loads(added.body["elements"])
    assert row["element_id"] == FEEDBACK_ELEMENT
    [shown] = api.shown()
    assert text_of(shown) == "You said: how did the deploy go?"
    assert [b["text"]["content"] for b in feedback_buttons(shown)] == ["👍", "👎"]
    assert [e.streaming for e in api.entities.values()] == ["off"]
    assert all(c.code == 0 for c in api.cardkit_calls())


async def test_the_buttons_sit_under_the_final_answer_not_under_the_question(make_bot):
    bot = await make_bot(ScriptedRunner(ask_then_answer), streaming="off")
    await bot.deliver(message_event("deploy the app"))
    await bot.gateway.drain(timeout=20)
    question_id, question = list(bot.api.cards.items())[-1]
    assert "Which framework?" in text_of(question) and not feedback_buttons(question)

    reply = await bot.click(card_action(payload(button(question, "React")), message_id=question_id))
    assert reply["toast"]["type"] == "success"
    await bot.gateway.drain(timeout=20)
    answer = bot.api.shown()[-1]
    assert text_of(answer) == "Going with React."
    assert [b["text"]["content"] for b in feedback_buttons(answer)] == ["👍", "👎"]


async def test_one_vote_per_person_and_a_second_click_changes_it(make_bot):
    bot = await make_bot(ScriptedRunner(), streaming="off")
    await bot.deliver(message_event("hello"))
    await bot.gateway.drain(timeout=20)
    message_id, answer = list(bot.api.cards.items())[-1]
    up_value, down_value = (payload(b) for b in feedback_buttons(answer))
    up, down = votes_counted("up"), votes_counted("down")

    said = []
    for user, value in [
        ("ou_alice", up_value),
        ("ou_alice", up_value),
        ("ou_alice", down_value),
        ("ou_bob", up_value),
    ]:
        reply = await bot.click(card_action(value, user=user, message_id=message_id))
        said.append(reply["toast"]["content"])
        assert "card" not in reply  # everyone sees the same buttons: the card stays as it is

    assert said == [
        "Thanks for the feedback.",
        "Thanks for the feedback.",
        "Feedback changed.",
        "Thanks for the feedback.",
    ]
    assert await bot.gateway.store.votes_on(up_value["t"]) == {"ou_alice": "down", "ou_bob": "up"}
    assert votes_counted("up") == up + 2 and votes_counted("down") == down + 1


async def test_a_vote_on_an_unknown_answer_is_told_it_expired(make_bot):
    bot = await make_bot(ScriptedRunner(), streaming="off")
    reply = await bot.click(card_action({"t": "gone", "a": "v+", "l": "zh"}))
    assert reply["toast"] == {"type": "warning", "content": "该回答已无法评价。"}  # in the card's language


async def test_someone_the_allow_lists_refuse_is_not_counted(make_bot):
    bot = await make_bot(ScriptedRunner(), streaming="off", feishu={"allowed_users": ["ou_alice"]})
    await bot.deliver(message_event("hello"))
    await bot.gateway.drain(timeout=20)
    message_id, answer = list(bot.api.cards.items())[-1]
    up_value = payload(feedback_buttons(answer)[0])
    reply = await bot.click(card_action(up_value, user="ou_mallory", message_id=message_id))
    assert reply["toast"]["type"] == "warning"
    assert await bot.gateway.store.votes_on(up_value["t"]) == {}


async def test_a_question_after_streamed_text_comes_once_the_stream_is_off_and_has_no_votes(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: asking(QUESTION, replies=["Let me check one thing."])))
    await bot.deliver(message_event("deploy the app"))
    await bot.gateway.drain(timeout=20)
    api = bot.api

    settings = api.cardkit_calls("settings")[-1]
    assert json.loads(settings.body["settings"]) == {"config": {"streaming_mode": False}}
    question_post = next(
        c for c in api.posted() if "Which framework?" in json.dumps(c.body, ensure_ascii=False)
    )
    assert settings.at < question_post.at  # the stream was off before the question came
    assert [e.streaming for e in api.entities.values()] == ["off"]
    assert not api.cardkit_calls("elements")  # an answer followed by a question is no final answer
    text, question = api.shown()
    assert text_of(text) == "Let me check one thing." and not feedback_buttons(text)
    assert "Which framework?" in text_of(question) and not feedback_buttons(question)
    reply = await bot.click(card_action(payload(button(question, "Vue")), message_id=list(api.cards)[-1]))
    assert reply["toast"]["type"] == "success" and "card" in reply  # the question's card updates at once
