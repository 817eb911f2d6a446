"""Events other than messages, pushed over the long connection: the webhook answers them 200
(README: other events are acknowledged so Feishu does not re-push them); the ws frame's answer
should be the same, not a 500 and an ERROR line per event."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from lark_oapi.ws.client import Client
from lark_oapi.ws.const import HEADER_MESSAGE_ID, HEADER_SEQ, HEADER_SUM, HEADER_TRACE_ID, HEADER_TYPE
from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from prometheus_client import REGISTRY

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

from .conftest import feishu_settings
from .events import TENANT, envelope

# As Feishu documents them (im.message.recalled_v1, im.message.message_read_v1,
# im.message.reaction.created_v1): the event bodies of their v2 envelopes.
RECALLED = envelope(
    "im.message.recalled_v1",
    {
        "message_id": "om_gone",
        "chat_id": "oc_group",
        "recall_time": "1667375470000",
        "recall_type": "message_owner",
    },
)
READ = envelope(
    "im.message.message_read_v1",
    {
        "reader": {
            "reader_id": {"open_id": "ou_alice", "union_id": "on_alice", "user_id": "alice"},
            "read_time": "1609484183000",
            "tenant_key": TENANT,
        },
        "message_id_list": ["om_1"],
    },
)
REACTION = envelope(
    "im.message.reaction.created_v1",
    {
        "message_id": "om_1",
        "reaction_type": {"emoji_type": "THUMBSUP"},
        "operator_type": "user",
        "user_id": {"open_id": "ou_alice", "union_id": "on_alice", "user_id": "alice"},
        "action_time": "1627641418803",
    },
)


def frame_for(payload: dict) -> Frame:
    frame = Frame(SeqID=1, LogID=1, service=1, method=1, payload=json.dumps(payload).encode())
    for key, value in (
        (HEADER_TYPE, "event"),
        (HEADER_MESSAGE_ID, "m1"),
        (HEADER_TRACE_ID, "t1"),
        (HEADER_SUM, "1"),
        (HEADER_SEQ, "0"),
    ):
        header = frame.headers.add()
        header.key, header.value = key, value
    return frame


def other_events() -> float:
    """The Feishu events counted as "other" so far (clarigate_inbound_events_total)."""
    value = REGISTRY.get_sample_value(
        "clarigate_inbound_events_total", {"platform": "feishu", "kind": "other"}
    )
    return value or 0.0


@pytest.mark.parametrize("payload", [RECALLED, READ, REACTION], ids=["recalled", "read", "reaction"])
async def test_other_events_on_the_long_connection_are_answered_200(fake_api, payload, caplog):
    runner = ScriptedRunner(lambda turn: None)
    gateway = Gateway(GatewayConfig(), MemoryStore(f"test-{uuid.uuid4().hex[:8]}"), runner)
    adapter = FeishuAdapter(feishu_settings(fake_api, mode="long_connection"), gateway)
    connection = adapter.long_connection
    assert connection is not None
    connection.core_loop = asyncio.get_running_loop()
    client = Client("cli_x", "secret", event_handler=connection.dispatcher())
    written: list[bytes] = []

    async def capture(data: bytes) -> None:
        written.append(data)

    client._write_message = capture  # type: ignore[method-assign]
    counted = other_events()
    # the ws client handles a frame in its own thread and loop, as in production
    await asyncio.to_thread(asyncio.run, client._handle_data_frame(frame_for(payload)))
    (data,) = written
    answer = Frame()
    answer.ParseFromString(data)
    assert json.loads(answer.payload)["code"] == 200, answer.payload
    assert other_events() == counted + 1  # counted as the webhook counts it
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert runner.calls == []


@pytest.mark.parametrize("payload", [RECALLED, READ, REACTION], ids=["recalled", "read", "reaction"])
async def test_the_same_events_on_the_webhook_are_answered_200(make_bot, payload):
    bot = await make_bot()
    response = await bot.deliver(payload)
    assert response.status_code == 200
