"""An event type the app is subscribed to that clarigate has no handler for, pushed over the long
connection: lark-oapi's ws client answers a type with no processor 500 ("processor not found"),
and Feishu pushes the event again and again. It is acknowledged (200) instead, counted as "other"
as on the webhook, and named once per type in the log, not once per event.

lark-oapi's real ws client handles each frame (``WsClient`` of the outage tests)."""

from __future__ import annotations

import logging
import uuid

import pytest
from prometheus_client import REGISTRY

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

from .events import envelope
from .test_long_connection_outage import lines, long_connection_of


def user_updated(name: str) -> dict:
    """contact.user.updated_v3 as Feishu documents it (a member of the tenant renamed)."""
    user = {"open_id": "ou_alice", "union_id": "on_alice", "user_id": "alice"}
    return envelope(
        "contact.user.updated_v3",
        {"object": {**user, "name": name}, "old_object": {"name": "Alice"}},
    )


def other_events() -> float:
    value = REGISTRY.get_sample_value(
        "clarigate_inbound_events_total", {"platform": "feishu", "kind": "other"}
    )
    return value or 0.0


async def test_an_unlisted_event_type_is_acknowledged_and_named_once(
    fake_api, caplog: pytest.LogCaptureFixture
):
    runner = ScriptedRunner(lambda turn: None)
    gateway = Gateway(GatewayConfig(workers=1), MemoryStore(f"test-{uuid.uuid4().hex[:8]}"), runner)
    async with long_connection_of(fake_api, gateway) as ws:
        counted = other_events()
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            codes = [await ws.push(user_updated(name), f"f{i}") for i, name in enumerate(("Al", "Ali"))]
        assert codes == [200, 200]  # acknowledged: Feishu does not push them again
        assert other_events() == counted + 2  # counted as the webhook counts them
        assert not list(lines(caplog, logging.WARNING))  # no "handle message failed" per event
        named = [r for r in lines(caplog, logging.DEBUG) if "contact.user.updated_v3" in r.getMessage()]
        assert [r.levelno for r in named] == [logging.INFO]  # once per type
        assert runner.calls == []
