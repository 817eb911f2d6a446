"""Who is talking when a card answers: a ``card.action.trigger`` callback names the operator's
open_id only, and the ack names them only when their name is known already; the run the answer
resumes names them as a message's run does (the contact API, asked where the job runs, a lookup
the click started waited for, never asked twice)."""

from __future__ import annotations

import asyncio
import threading

from clarigate.adapters.testing import ScriptedRunner

from .cards import button, payload, text_of
from .events import card_action
from .test_names import contact_calls
from .test_scenarios import agent, ask

GROUP = {"chat": "oc_g", "chat_type": "group", "mention_bot": True}


def speakers(bot) -> list[tuple[str, str | None]]:
    """Who each run was told is talking: (open_id, display name)."""
    return [(c.speaker["sender"]["user_id"], c.speaker["sender"]["display_name"]) for c in bot.runner.calls]


async def test_a_member_who_never_wrote_is_named_on_the_run_their_click_resumes(make_bot):
    bot = await make_bot(ScriptedRunner(agent), answer_policy="anyone")
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    message_id, card = await ask(bot, **GROUP)

    done = await bot.click(
        card_action(payload(button(card, "Vue")), user="ou_bob", chat="oc_g", message_id=message_id)
    )
    assert done["toast"]["type"] == "success"
    await bot.gateway.drain()

    assert "Going with Vue." in text_of(bot.api.shown()[-1])
    assert speakers(bot) == [("ou_alice", "Alice Wang"), ("ou_bob", "Bob Li")]


async def test_the_click_is_answered_before_feishu_says_who_clicked(make_bot):
    bot = await make_bot(ScriptedRunner(agent), answer_policy="anyone")
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    message_id, card = await ask(bot, **GROUP)
    bot.api.contact_hold = threading.Event()  # Feishu's contact API is slow today

    vue = payload(button(card, "Vue"))
    done = await asyncio.wait_for(
        bot.click(card_action(vue, user="ou_bob", chat="oc_g", message_id=message_id)), 2
    )
    assert done["toast"]["type"] == "success"  # answered meanwhile
    bot.api.contact_hold.set()
    await bot.gateway.drain()

    assert "Going with Vue." in text_of(bot.api.shown()[-1])
    assert speakers(bot)[-1] == ("ou_bob", "Bob Li")
    assert [c.path.rsplit("/", 1)[-1] for c in contact_calls(bot)].count("ou_bob") == 1  # the click's lookup
