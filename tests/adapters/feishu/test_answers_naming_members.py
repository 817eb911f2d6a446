"""A typed answer that names a member (``@Carol``) in the bot's group thread is an answer, not talk
to Carol: to a free-text question ("Who should review the release?"), or after its writer clicked
"Other…" and types in the thread. Talk to a member that answers nothing stays theirs
(``test_mentions_of_others``): nothing runs, nothing is said, the question stays open."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest

from .cards import button, is_interactive, payload, text_of
from .events import card_action
from .test_mentions_of_others import GROUP, to_carol
from .test_scenarios import ask

WHO_REVIEWS = text_request("Who should review the release?", "clarification:who-1")
FRAMEWORK = choice_request("Which framework?", ["React", "Vue"], request_id="clarification:fw-1")


def asks(request: HumanInputRequest):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and "deploy" in turn.text:
            return asking(request)
        return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}."])

    return script


async def bobs_question(make_bot, request: HumanInputRequest):
    """Bob asks the bot in the group; the bot, its question card's message id and card."""
    bot = await make_bot(ScriptedRunner(asks(request)))
    question_id, card = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )
    return bot, question_id, card


async def status_of(bot, request_id: str) -> str:
    return (await bot.gateway.store.get_pending(request_id)).status


async def test_the_askers_reply_naming_a_member_answers_the_free_text_question(make_bot):
    bot, question_id, _ = await bobs_question(make_bot, WHO_REVIEWS)

    await bot.deliver(to_carol("should review it", user="ou_bob"))
    await bot.gateway.drain()

    assert [c.response.value for c in bot.runner.calls if c.response] == ["@Carol should review it"]
    assert "Going with @Carol should review it." in text_of(bot.api.shown()[-1])
    assert not is_interactive(bot.api.cards[question_id])
    assert "Answered by" in text_of(bot.api.cards[question_id])
    assert await status_of(bot, WHO_REVIEWS.request_id) == "answered"


async def test_after_other_the_reply_naming_a_member_is_the_answer(make_bot):
    bot, question_id, card = await bobs_question(make_bot, FRAMEWORK)
    other = card_action(
        payload(button(card, "Other…")), user="ou_bob", chat=GROUP["chat"], message_id=question_id
    )
    await bot.click(other)

    await bot.deliver(to_carol("picks it", user="ou_bob"))
    await bot.gateway.drain()

    assert [c.response.value for c in bot.runner.calls if c.response] == ["@Carol picks it"]
    assert await status_of(bot, FRAMEWORK.request_id) == "answered"


async def test_talk_to_a_member_over_the_askers_choice_is_ignored(make_bot):
    bot, question_id, _ = await bobs_question(make_bot, FRAMEWORK)
    sent = len(bot.api.message_calls())

    await bot.deliver(to_carol("can you check the backups?", user="ou_bob"))
    await bot.deliver(to_carol("is it you?", user="ou_alice"))
    await bot.gateway.drain()

    assert len(bot.runner.calls) == 1 and len(bot.api.message_calls()) == sent  # no run, not a word
    assert is_interactive(bot.api.cards[question_id])
    assert await status_of(bot, FRAMEWORK.request_id) == "pending"
