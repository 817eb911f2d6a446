"""A group question whose asker recalled (撤回) their message while the bot worked: Feishu refuses
the reply to it (230011), so the question card is posted in the chat. A reply in a thread under that
card (``root_id`` the card, ``thread_id`` set: im.message.receive_v1) goes on with the asker's
conversation and answers the question, as under the bot's post in a one-to-one chat."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .cards import text_of
from .events import message_event
from .test_scenarios import agent, ask

GROUP = {"chat": "oc_group", "chat_type": "group"}
CHAT = "/open-apis/im/v1/messages"


async def asked_after_a_recall(bot) -> str:
    """Bob asks "@bot deploy it" and recalls it: the question card is posted in the chat."""
    bot.api.fail_next(400, 230011, path_part="om_root/reply", times=50)  # recalled for good
    question, _ = await ask(bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP)
    [posted] = [c for c in bot.api.posted() if c.code == 0 and "Which framework?" in text_of(c.card())]
    assert posted.path == CHAT and posted.body["receive_id"] == "oc_group"
    return question


@pytest.mark.parametrize("mention_bot", [False, True], ids=["typed", "mentioning the bot"])
async def test_a_reply_in_a_thread_under_the_card_posted_for_a_recalled_message_answers_it(
    make_bot, mention_bot
):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    question = await asked_after_a_recall(bot)
    before = len(bot.api.posted())

    vue = message_event("Vue", user="ou_bob", root_id=question, mention_bot=mention_bot, **GROUP)
    await bot.deliver(vue)
    await bot.gateway.drain()

    asked, answered = bot.runner.calls  # not a new request in a conversation of its own
    assert answered.response is not None and answered.response.value == "Vue"
    assert answered.thread_id == asked.thread_id
    later = [c for c in bot.api.posted()[before:] if c.code == 0]
    assert later and all(c.path == f"{CHAT}/{question}/reply" for c in later)  # in Bob's thread
    assert any("Going with Vue." in text_of(card) for card in bot.api.shown())


async def test_chatter_in_a_thread_under_someone_elses_message_stays_ignored(make_bot):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    await asked_after_a_recall(bot)
    await bot.deliver(message_event("Vue", user="ou_bob", root_id="om_carols", **GROUP))
    await bot.gateway.drain()
    assert len(bot.runner.calls) == 1  # a thread the bot is not part of
