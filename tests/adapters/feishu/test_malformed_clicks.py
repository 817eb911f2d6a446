"""Signed card callbacks with a shape Feishu never sends get 400 (not a 500 that Feishu retries)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .cards import button, payload
from .events import card_action
from .test_scenarios import agent, ask


async def test_callbacks_with_the_wrong_shapes_are_bad_requests_and_answer_nothing(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    vue = payload(button(card, "Vue"))
    broken = [
        card_action({**vue, "a": "form"}, message_id=message_id, form_value="f1=3"),
        card_action({**vue, "a": "otx"}, message_id=message_id, form_value=["other_text"]),
        card_action({**vue, "a": "sel"}, message_id=message_id, tag="select_static", option=7),
        card_action({**vue, "a": "otx"}, message_id=message_id, input_value={"text": "x"}),
    ]
    for event in broken:
        response = await bot.deliver(event)
        assert response.status_code == 400, (event["event"]["action"], response.text)
    await bot.gateway.drain()
    assert [c.response for c in bot.runner.calls if c.response] == []

    ok = await bot.click(card_action(vue, message_id=message_id))
    assert ok["toast"]["type"] == "success"
