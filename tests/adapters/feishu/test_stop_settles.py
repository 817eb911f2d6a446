"""Stopping the adapter while clicked cards are still being replaced through the open API: the stop
waits for those updates (a few seconds at most), so no card is left as it was before the click."""

from __future__ import annotations

import threading

from clarigate.adapters.feishu import legacy
from clarigate.adapters.testing import ScriptedRunner

from .cards import button, payload, text_of
from .events import legacy_card_action, legacy_signed
from .test_scenarios import agent, ask


async def test_the_stop_waits_for_the_card_updates_under_way(make_bot, monkeypatch):
    monkeypatch.setattr(legacy, "UPDATE_WAIT_SECONDS", 0.05)  # answered with the card at once
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    bot.api.hold = threading.Event()  # Feishu's message API answers nothing until released
    try:
        click = legacy_card_action(payload(button(card, "Vue")), message_id=message_id)
        for _ in range(2):  # the click, and Feishu's delivery of it again: two updates, in order
            body, headers = legacy_signed(click)
            answered = await bot.http.post("/feishu/events", content=body, headers=headers, timeout=30)
            assert "Answered by <at id=ou_alice></at>: Vue" in text_of(answered.json())
        assert [c.status for c in bot.api.patched()] == [0]  # the first held, the second waits for it

        # Feishu answers again a moment after the stop began: the stop is still waiting then
        threading.Timer(0.5, bot.api.hold.set).start()
        await bot.gateway.stop(grace=0)
    finally:
        bot.api.hold.set()
    updates = [c for c in bot.api.patched() if message_id in c.path]
    assert [c.status for c in updates] == [200, 200]  # both landed before the stop was over
    assert "Answered by <at id=ou_alice></at>: Vue" in text_of(bot.api.cards[message_id])
