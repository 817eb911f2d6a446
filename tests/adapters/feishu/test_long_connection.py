"""Long connection mode: events reach the core through the same path as webhooks.

The websocket protocol itself is not faked: the tests call the handler the ws
client calls for every data frame (``EventDispatcherHandler._do_without_validation``
on the handler we register), from a separate thread as the client does.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from lark_oapi.core.json import JSON

from adapters.feishu import FeishuAdapter
from gateway.config import GatewayConfig
from gateway.core import Gateway
from gateway.store.memory import MemoryStore
from gateway.testing import ScriptedRunner

from .cards import button, payload, text_of
from .conftest import feishu_settings
from .events import card_action, message_event
from .test_scenarios import agent


async def test_long_connection_delivers_messages_and_card_callbacks_through_the_same_path(fake_api):
    runner = ScriptedRunner(agent)
    config = GatewayConfig(workers=2, stale_claim_seconds=0.3, shutdown_grace_seconds=1.0)
    gateway = Gateway(config, MemoryStore(f"test-{uuid.uuid4().hex[:8]}"), runner)
    adapter = FeishuAdapter(feishu_settings(fake_api, mode="long_connection"), gateway)
    gateway.register(adapter)
    assert adapter.routes() == []
    await gateway.start()
    try:
        # The ws client ran in its own thread and asked the (fake) server for its endpoint.
        for _ in range(200):
            if any(c.path == "/callback/ws/endpoint" for c in fake_api.calls):
                break
            await asyncio.sleep(0.02)
        bootstrap = [c for c in fake_api.calls if c.path == "/callback/ws/endpoint"]
        assert bootstrap and bootstrap[0].body["AppID"] == adapter.settings.app_id

        frames = adapter.long_connection.dispatcher()  # what the ws client calls per data frame
        event = json.dumps(message_event("deploy the app", event_id="ev-ws-1")).encode()
        assert await asyncio.to_thread(frames._do_without_validation, event) is None
        await asyncio.to_thread(frames._do_without_validation, event)  # a redelivery
        await gateway.drain()
        assert [c.text for c in runner.calls] == ["deploy the app"]

        message_id, card = list(fake_api.cards.items())[-1]
        click = json.dumps(card_action(payload(button(card, "React")), message_id=message_id)).encode()
        result = await asyncio.to_thread(frames._do_without_validation, click)
        reply = json.loads(JSON.marshal(result))  # as the ws client frames it
        assert reply["toast"]["type"] == "success"
        assert "✅ Answered by <at id=ou_alice></at>: React" in text_of(reply["card"]["data"])
        await gateway.drain()
        assert runner.calls[-1].response.option_id == "option-1"
    finally:
        await gateway.stop(grace=0)
    assert adapter.long_connection._thread is None
