"""A question the chat refused (the bot removed from the group: Feishu's 400, code 230002) was
never seen: it does not stay open. Once the bot is back, a line written in the thread is a new
request, never taken as the answer to a question nobody was shown."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .events import message_event
from .test_scenarios import agent

GROUP = {"chat": "oc_group", "chat_type": "group"}


async def test_a_question_the_chat_refused_is_closed_so_a_later_line_is_not_its_answer(make_bot):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    bot.api.fail_next(400, 230002, method="POST")  # the question's reply: the bot is out of the chat
    started = message_event("deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP)
    await bot.deliver(started)
    await bot.gateway.drain()
    assert not bot.api.cards  # refused: no card, and no text fallback either
    assert bot.runner.calls[0].text.endswith("deploy it")

    # the bot is added back; Bob writes in his thread, without mentioning the bot
    await bot.deliver(message_event("Vue", user="ou_bob", root_id="om_root", **GROUP))
    await bot.gateway.drain()
    later = bot.runner.calls[1]
    assert later.response is None and later.text.endswith("Vue")  # a request, not an answer
    assert "For your clarification" not in later.text and "Which framework?" not in later.text
    assert later.thread_id == bot.runner.calls[0].thread_id
