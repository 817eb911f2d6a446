"""The core slow to take a click or a message (Redis slow): Feishu still gets its answer in time.

A click the core has not finished with when Feishu's answer is due is answered with a neutral
toast saying it is being handled (in the card's language), and the answered card Feishu would
have shown lands through the open API once the core is done; a late failure is logged. A message
not taken in time is answered 500 over the long connection: Feishu pushes it again, and the core
runs it once. The core is held by a gate the test opens, never by a wall-clock race.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import Any

import pytest
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from clarigate.adapters.feishu import card_updates, long_connection
from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig

from ...conftest import RedisStoreFactory
from .cards import button, payload, text_of
from .events import card_action, message_event
from .test_connections import within
from .test_long_connection_outage import WsClient, lines, long_connection_of
from .test_scenarios import agent, ask

PENDING_EN = "Received: still being handled, one moment…"
PENDING_ZH = "已收到，正在处理，请稍候…"


def held(
    target: Any, name: str, monkeypatch: pytest.MonkeyPatch, fail: bool = False, after: bool = False
) -> asyncio.Event:
    """Hold ``target.name`` (a coroutine method of the core) until the returned gate is opened
    (opened anyway after 20 s, so that a run without the fix ends); ``fail``: then it raises;
    ``after``: the call is made first, its answer held."""
    gate, real = asyncio.Event(), getattr(target, name)
    asyncio.get_running_loop().call_later(20, gate.set)

    async def slow(*args: Any, **kwargs: Any) -> Any:
        answer = await real(*args, **kwargs) if after else None
        await gate.wait()
        if fail:
            raise KeyError("a bug behind a slow click")
        return answer if after else await real(*args, **kwargs)

    monkeypatch.setattr(target, name, slow)
    return gate


def card_updates_of(api: Any, message_id: str) -> list[str]:
    """The texts of the cards Feishu was asked to put in place of ``message_id``'s, answered 200."""
    return [text_of(c.card()) for c in api.patched() if message_id in c.path and c.status == 200]


async def test_a_slow_click_is_answered_in_time_and_its_card_follows_through_the_open_api(
    make_bot, monkeypatch
):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    gate = held(bot.gateway, "submit_answer", monkeypatch)

    reply = await bot.click(card_action(payload(button(card, "Vue")), message_id=message_id))
    assert reply == {"toast": {"type": "info", "content": PENDING_EN}}  # not Feishu's error, no card yet
    assert not gate.is_set()  # answered while the core still had the click
    assert not card_updates_of(bot.api, message_id)

    gate.set()  # the core takes the click: it counts, and the answered card lands
    assert await asyncio.to_thread(within, 10.0, lambda: card_updates_of(bot.api, message_id))
    [shown] = card_updates_of(bot.api, message_id)
    assert "✅ Answered by <at id=ou_alice></at>: Vue" in shown
    await bot.gateway.drain()
    assert [c.response.option_id for c in bot.runner.calls if c.response] == ["option-2"]


async def test_a_slow_click_that_fails_afterwards_is_logged(make_bot, monkeypatch, caplog):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    gate = held(bot.gateway, "submit_answer", monkeypatch, fail=True)
    reply = await bot.click(card_action(payload(button(card, "Vue")), message_id=message_id))
    assert reply["toast"]["type"] == "info"

    def failure_said() -> list[logging.LogRecord]:
        return [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]

    with caplog.at_level(logging.INFO):
        gate.set()
        await bot.adapter.receiver.cards.settle()
    [record] = failure_said()
    assert "failed afterwards" in record.getMessage()
    assert "a bug behind a slow click" in str(record.exc_info[1])
    assert not card_updates_of(bot.api, message_id)  # nothing counted: the card stays as it was


def chinese(turn: Any) -> TurnOutput:
    """Asks in Chinese; says what the answer was."""
    if turn.response is not None:
        return TurnOutput(replies=[f"好的：{turn.response.value}"])
    return asking(choice_request("用哪个框架？", ["React", "Vue"]).model_copy(update={"locale": "zh"}))


def answer_of(ws: WsClient) -> tuple[int, dict[str, Any]]:
    """The code and the data of the answer the ws client wrote back last."""
    frame = Frame()
    frame.ParseFromString(ws.written[-1])
    answer = json.loads(frame.payload)
    data = answer.get("data")
    return int(answer["code"]), json.loads(base64.b64decode(data)) if data else {}


async def test_a_slow_click_over_the_long_connection_is_answered_in_the_cards_language(
    fake_api, redis_stores: RedisStoreFactory, monkeypatch
):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    runner = ScriptedRunner(chinese)
    gateway = Gateway(GatewayConfig(workers=1, streaming="off"), redis_stores(), runner)
    async with long_connection_of(fake_api, gateway) as ws:
        assert await ws.push(message_event("发布", event_id="ev-ws-zh"), "f1") == 200
        await gateway.drain(timeout=10)
        message_id, card = list(fake_api.cards.items())[-1]
        gate = held(gateway, "submit_answer", monkeypatch)

        click = card_action(payload(button(card, "Vue")), message_id=message_id)
        await ws.push(click, "f2")
        code, data = answer_of(ws)
        assert (code, data) == (200, {"toast": {"type": "info", "content": PENDING_ZH}})
        assert not gate.is_set()

        gate.set()
        assert await asyncio.to_thread(within, 10.0, lambda: card_updates_of(fake_api, message_id))
        assert "已回答：Vue" in card_updates_of(fake_api, message_id)[0]
        await gateway.drain(timeout=10)
        assert [c.response.option_id for c in runner.calls if c.response] == ["option-2"]


async def test_a_message_not_taken_in_time_is_pushed_again_and_runs_once(
    fake_api, redis_stores: RedisStoreFactory, monkeypatch, caplog
):
    """Answered 500 (Feishu pushes it again), one warning of ours, not the SDK's error line; the
    pushes again, while the first is still in the core and after, are deduplicated there."""
    monkeypatch.setattr(long_connection, "HANDLER_TIMEOUT_SECONDS", 0.3)
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores()
    gateway = Gateway(GatewayConfig(workers=1, streaming="off", progress_after_seconds=60.0), store, runner)
    async with long_connection_of(fake_api, gateway) as ws:
        gate = held(store, "accept_job", monkeypatch)  # Redis slow to take the message
        event = message_event("hello", event_id="ev-ws-slow")
        caplog.clear()
        with caplog.at_level(logging.INFO):
            codes = [await ws.push(event, "f1"), await ws.push(event, "f2")]
        assert codes == [500, 500]  # not taken in time: Feishu pushes it again
        said = list(lines(caplog, logging.WARNING))
        assert [r.name for r in said] == ["clarigate.adapters.feishu.long_connection"] * 2
        assert all("Feishu pushes it again" in r.getMessage() and not r.exc_info for r in said)

        gate.set()  # both pushes reach the store now
        await gateway.drain(timeout=10)
        assert await ws.push(event, "f3") == 200  # and once more, after
        await gateway.drain(timeout=10)
        assert [c.text for c in runner.calls] == ["hello"]  # once, though pushed three times
        replies = [text_of(card) for card in fake_api.shown()]
        assert len(replies) == 1 and "You said: hello" in replies[0]


async def test_a_slow_clicks_card_does_not_cover_a_later_clicks(make_bot, monkeypatch):
    """ "Other…" clicked while the core is slow, then an option answered at once: the answered card
    stays; the "Other…" box that comes late is not put back over it."""
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    gate = held(bot.gateway, "may_answer", monkeypatch, after=True)  # only "Other…" asks it

    other = await bot.click(card_action(payload(button(card, "Other…")), message_id=message_id))
    assert other["toast"]["type"] == "info"
    answered = await bot.click(card_action(payload(button(card, "Vue")), message_id=message_id))
    assert "✅ Answered by <at id=ou_alice></at>: Vue" in text_of(answered["card"]["data"])

    gate.set()
    await bot.adapter.receiver.cards.settle()
    assert card_updates_of(bot.api, message_id) == []  # Feishu shows the answered card still
