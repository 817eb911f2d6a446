"""Clicks Feishu delivers in less usual ways: on a forwarded copy of a question's card, a Cancel
delivered again, a click whose operator carries no open_id (``card.action.trigger`` payloads)."""

from __future__ import annotations

import logging

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.protocol import ui_text

from .cards import button, is_interactive, payload, text_of
from .events import card_action
from .test_scenarios import agent, ask


async def test_an_answer_on_a_forwarded_copy_also_closes_the_original_card(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)  # posted in oc_p2p
    vue = payload(button(card, "Vue"))

    reply = await bot.click(card_action(vue, user="ou_alice", message_id="om_fwd", chat="oc_other"))
    assert reply["toast"] == {"type": "success", "content": "Answer received."}
    assert "Answered by <at id=ou_alice></at>: Vue" in text_of(reply["card"]["data"])  # the copy
    await bot.adapter.receiver.cards.settle()

    patched = bot.api.patched()
    assert [c.path for c in patched] == [f"/open-apis/im/v1/messages/{message_id}"]
    assert patched[0].card() == reply["card"]["data"]
    assert not is_interactive(bot.api.cards[message_id])
    await bot.gateway.drain()
    assert [c.response.option_id for c in bot.runner.calls if c.response] == ["option-2"]


async def test_a_click_on_the_original_card_is_answered_by_the_reply_alone(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    await bot.click(card_action(payload(button(card, "Vue")), message_id=message_id))
    await bot.adapter.receiver.cards.settle()
    assert bot.api.patched() == []


async def test_the_original_cards_failed_update_is_logged_and_the_reply_stands(make_bot, caplog):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    bot.api.fail_next(400, 230001, method="PATCH")
    reply = await bot.click(card_action(payload(button(card, "React")), message_id="om_fwd", chat="oc_x"))
    assert reply["toast"]["type"] == "success" and not is_interactive(reply["card"]["data"])
    await bot.adapter.receiver.cards.settle()
    assert [c.status for c in bot.api.patched()] == [400]
    assert "the question's original card was not updated" in caplog.text


async def test_a_cancel_delivered_again_gets_the_closed_card_again(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    cancel = card_action(payload(button(card, "Cancel")), message_id=message_id, event_id="ev-cancel-1")

    first = await bot.click(cancel)
    again = await bot.click(cancel)  # Feishu retries when it did not get the first reply in time
    assert first["toast"]["type"] == "success" and "Cancelled by" in first["toast"]["content"]
    assert "Cancelled by <at id=ou_alice></at>" in text_of(first["card"]["data"])
    assert again == first


async def test_a_click_without_operator_open_id_gets_a_warning_toast_not_a_400(make_bot, caplog):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    click = card_action({**payload(button(card, "Vue")), "l": "zh"}, message_id=message_id)
    del click["event"]["operator"]["open_id"]  # union_id and user_id only

    with caplog.at_level(logging.WARNING, logger="clarigate.adapters.feishu"):
        response = await bot.deliver(click)
    assert response.status_code == 200, response.text
    assert response.json() == {"toast": {"type": "warning", "content": ui_text("click_unattributed", "zh")}}
    assert any(r.levelno == logging.WARNING and "operator.open_id" in r.getMessage() for r in caplog.records)
    await bot.gateway.drain()
    assert [c.response for c in bot.runner.calls if c.response] == []
    assert bot.api.patched() == []


async def test_a_click_without_an_operator_object_is_still_a_bad_request(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    click = card_action(payload(button(card, "Vue")), message_id=message_id)
    del click["event"]["operator"]
    response = await bot.deliver(click)
    assert response.status_code == 400
