"""Card callbacks and events in the older formats Feishu still sends, languages, checkers and dates."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from clarigate.adapters.feishu import legacy
from clarigate.adapters.feishu.card_updates import CardUpdates
from clarigate.adapters.testing import ScriptedRunner, asking, form_request
from clarigate.agent.protocol import FormField, HumanInputRequest

from .cards import button, components, payload, text_of
from .events import card_action, legacy_card_action, legacy_signed, schema_one_event
from .test_connections import within
from .test_scenarios import agent, ask


async def test_a_schema_one_message_is_read_and_other_schema_one_events_are_acknowledged(make_bot, caplog):
    bot = await make_bot(ScriptedRunner(agent))
    response = await bot.deliver(schema_one_event('deploy the app, ask <at open_id="ou_bob">@Bob</at>'))
    assert response.status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["deploy the app, ask @Bob"]
    assert "Which framework?" in text_of(bot.api.shown()[-1])

    other = schema_one_event("")
    other["event"] = {"type": "add_bot", "app_id": "cli_x", "tenant_key": "t", "open_chat_id": "oc_1"}
    with caplog.at_level(logging.WARNING):
        response = await bot.deliver(other)
    assert response.status_code == 200  # a 4xx would make Feishu push it again for hours
    assert any("schema 1.0 'add_bot'" in r.getMessage() for r in caplog.records)


async def test_an_old_style_card_callback_gets_the_documented_answer(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)

    body, headers = legacy_signed(legacy_card_action(payload(button(card, "Vue")), message_id=message_id))
    answered = await bot.http.post("/feishu/events", content=body, headers=headers)
    assert answered.status_code == 200  # not 403: its "token" is the card's, not the verification token
    # the old answer is a card or a toast: the toast, with the card replaced through the API
    assert answered.json() == {"toast": {"type": "success", "content": "Answer received."}}
    (update,) = bot.api.patched()
    assert update.path == f"/open-apis/im/v1/messages/{message_id}"
    new_card = bot.api.cards[message_id]
    assert new_card["schema"] == "2.0" and "Answered by <at id=ou_alice></at>: Vue" in text_of(new_card)
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.option_id == "option-2"

    body, headers = legacy_signed(legacy_card_action({"t": "gone", "a": "o1", "l": "zh"}))
    expired = await bot.http.post("/feishu/events", content=body, headers=headers)
    assert expired.status_code == 200 and "过期" in expired.json()["toast"]["content"]

    body, headers = legacy_signed(legacy_card_action(payload(button(card, "Vue"))), token="not-ours")
    assert (await bot.http.post("/feishu/events", content=body, headers=headers)).status_code == 401


async def test_an_old_style_callback_whose_card_cannot_be_replaced_answers_with_the_card(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    bot.api.fail_next(400, 230001, method="PATCH")  # Feishu will not update it through the API
    body, headers = legacy_signed(legacy_card_action(payload(button(card, "Vue")), message_id=message_id))
    answered = await bot.http.post("/feishu/events", content=body, headers=headers)
    new_card = answered.json()  # the old way to update a card: its JSON as the answer (no toast then)
    assert new_card["schema"] == "2.0" and "Answered by <at id=ou_alice></at>: Vue" in text_of(new_card)


async def test_an_old_style_click_is_answered_in_time_while_the_open_api_is_slow(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    bot.api.hold = threading.Event()  # Feishu's message API answers nothing until released
    try:
        body, headers = legacy_signed(legacy_card_action(payload(button(card, "Vue")), message_id=message_id))
        started = time.monotonic()
        answered = await bot.http.post("/feishu/events", content=body, headers=headers, timeout=30)
        took = time.monotonic() - started
    finally:
        bot.api.hold.set()
        bot.api.hold = None
    assert took < 3.0  # Feishu's limit for answering a callback
    new_card = answered.json()  # the card itself is the answer, which Feishu applies
    assert "Answered by <at id=ou_alice></at>: Vue" in text_of(new_card)
    await bot.gateway.drain()
    assert [c.response.option_id for c in bot.runner.calls if c.response] == ["option-2"]  # counted once
    # the API's update lands too, with the same card
    assert await asyncio.to_thread(within, 10.0, lambda: len(bot.api.patched()) == 1)
    assert await asyncio.to_thread(within, 10.0, lambda: bot.api.patched()[0].status == 200)
    assert bot.api.cards[message_id] == new_card


async def test_slow_updates_of_one_card_land_in_the_order_of_the_clicks(monkeypatch):
    """Two clicks on one card while the open API is slow: each callback is answered with its card,
    and the API's updates land in the order of the clicks, so the card ends as the later one."""
    monkeypatch.setattr(legacy, "UPDATE_WAIT_SECONDS", 0.05)
    landed: list[int] = []
    delays = iter([0.4, 0.0])  # the first click's update is the slow one

    async def update_card(message_id: str, card: dict) -> None:
        await asyncio.sleep(next(delays))
        landed.append(card["n"])

    first = {"toast": {"type": "error"}, "card": {"type": "raw", "data": {"n": 1}}}
    second = {"toast": {"type": "success"}, "card": {"type": "raw", "data": {"n": 2}}}
    cards = CardUpdates(update_card)
    assert await legacy.legacy_reply(first, "om_1", cards) == {"n": 1}  # not in time: the card
    assert await legacy.legacy_reply(second, "om_1", cards) == {"n": 2}
    for _ in range(200):
        if len(landed) == 2:
            break
        await asyncio.sleep(0.05)
    assert landed == [1, 2]  # the card ends as the later click left it


def chinese_form() -> HumanInputRequest:
    """A Chinese form with a required checkbox and a date."""
    request = form_request(
        "确认发布？",
        [
            FormField(name="agree", label="我已阅读发布须知", type="checkbox", required=True),
            FormField(name="day", label="发布日期", type="date", required=True),
        ],
    )
    return request.model_copy(update={"locale": "zh"})


async def test_toasts_for_unknown_cards_follow_the_cards_language(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: asking(chinese_form())))
    message_id, card = await ask(bot, "发布")
    assert [b["text"]["content"] for b in components(card, "button")] == ["提交", "取消"]
    forgotten = {**payload(button(card, "取消")), "t": "not-known-any-more"}
    reply = await bot.click(card_action(forgotten, message_id=message_id))
    assert reply["toast"]["content"] == "该问题已过期，请重新发送请求。"


async def test_a_required_checkbox_is_marked_and_must_be_ticked(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: asking(chinese_form())))
    message_id, card = await ask(bot, "发布")
    [checker] = components(card, "checker")
    assert checker["text"]["content"] == "我已阅读发布须知（必填）"  # full-width, as Chinese writes it
    submit = payload(button(card, "提交"))

    unticked = {"f1": False, "f2": "2024-04-01 +0800"}
    refused = await bot.click(card_action(submit, form_value=unticked, message_id=message_id))
    assert refused["toast"]["type"] == "error" and "我已阅读发布须知" in refused["toast"]["content"]
    assert "card" not in refused

    ticked = {"f1": True, "f2": "2024-04-01 +0800"}
    done = await bot.click(card_action(submit, form_value=ticked, message_id=message_id))
    assert done["toast"]["type"] == "success"
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.values == {"agree": True, "day": "2024-04-01"}


async def test_ticking_a_checker_inside_a_form_answers_nothing_until_submit(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: asking(chinese_form())))
    message_id, card = await ask(bot, "发布")
    [checker] = components(card, "checker")
    tick = card_action(payload(checker), tag="checker", checked=True, message_id=message_id)
    assert await bot.click(tick) == {}  # the card stays as the person is filling it in
    await bot.gateway.drain()
    assert [c.response for c in bot.runner.calls] == [None]


async def test_the_date_picker_value_keeps_the_day_the_person_picked(make_bot):
    fields = [FormField(name="deadline", label="Deadline", type="date", required=True)]
    bot = await make_bot(ScriptedRunner(lambda turn: asking(form_request("When?", fields))))
    message_id, card = await ask(bot, "plan")
    submit = payload(button(card, "Submit"))
    # Feishu's documented form_value for a date_picker: the date and the picker's UTC offset
    await bot.click(card_action(submit, form_value={"f1": "2024-04-01 -0700"}, message_id=message_id))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.values == {"deadline": "2024-04-01"}
