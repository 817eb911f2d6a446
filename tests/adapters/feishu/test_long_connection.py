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

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.feishu.long_connection import LongConnection
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

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


async def test_callbacks_keep_their_documented_shapes_through_the_sdks_models(fake_api):
    """The ws path goes through lark-oapi's P2CardActionTrigger model and back: nothing may be lost."""
    seen: list[dict] = []

    class Recorder:
        async def handle(self, payload: dict) -> dict:
            seen.append(payload)
            return {}

    async def ping() -> bool:
        return True

    settings = feishu_settings(fake_api, mode="long_connection")
    connection = LongConnection(settings, Recorder(), ping)  # type: ignore[arg-type]
    connection.core_loop = asyncio.get_running_loop()
    frames = connection.dispatcher()
    tick = card_action({"t": "tok", "a": "chk", "l": "zh"}, tag="checker", checked=True)
    submit = card_action(
        {"t": "tok", "a": "form", "l": "zh"},
        form_value={"f1": True, "f2": "2024-04-01 +0800", "f3": ["o1", "o3"], "f4": "o2", "f5": "3"},
        name="submit_answer",
    )
    for event in (tick, submit):
        await asyncio.to_thread(frames._do_without_validation, json.dumps(event).encode())
    values = [p["event"]["action"]["value"] for p in seen]
    assert values == [tick["event"]["action"]["value"], submit["event"]["action"]["value"]]
    assert seen[0]["event"]["action"]["checked"] is True
    assert seen[1]["event"]["action"]["form_value"] == submit["event"]["action"]["form_value"]


async def test_a_worker_process_opens_no_long_connection(fake_api):
    """``serve``'s worker process sends only: a second long connection would take events the
    web process should ack. Nor does it ask for the bot's identity (which mention is the bot's is
    told where messages are taken in): the web process asks, once for the replica."""
    gateway = Gateway(GatewayConfig(workers=1), MemoryStore(f"test-{uuid.uuid4().hex[:8]}"), ScriptedRunner())
    adapter = FeishuAdapter(feishu_settings(fake_api, mode="long_connection"), gateway)
    gateway.register(adapter)
    await gateway.start(receive=False)
    try:
        assert adapter.long_connection._thread is None  # started, it is there at once
        await adapter.startup.wait()  # (in the background)
        assert adapter.still_starting() is None  # the client is built: sending works
        assert not [c for c in fake_api.calls if c.path.endswith("/bot/v3/info")]
        assert await adapter.connection_up() is None
    finally:
        await gateway.stop(grace=0)
