"""A reply Feishu took just before its replica died is sent again by the replica that takes the
job over with the same ``uuid`` (derived from the job and the item's place, on any replica), so
Feishu shows it once: the re-send within its hour is absorbed.

Two gateways on one real Redis, the real Feishu SDK against the fake open API (which keeps one
message per ``uuid``, as Feishu documents).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.redis import RedisStore
from clarigate.gateway.web.server import build_app

from ...gateway.conftest import delete_prefix
from ...gateway.jobs.crash import abandon, eventually
from .conftest import REDIS_URL, feishu_settings
from .events import message_event, signed
from .fake_open_api import FakeOpenApi

QUICK: dict[str, Any] = {"stale_claim_seconds": 0.5, "streaming": "off", "progress_after_seconds": 60.0}


@pytest.fixture
async def replicas(fake_api: FakeOpenApi) -> AsyncIterator[Any]:
    prefix = f"test-takeover-{uuid.uuid4().hex[:10]}"
    settings = feishu_settings(fake_api)
    built: list[tuple[Gateway, httpx.AsyncClient]] = []

    async def replica(reply: str) -> tuple[Gateway, httpx.AsyncClient]:
        runner = ScriptedRunner(lambda turn: TurnOutput(replies=[reply]))
        gateway = Gateway(GatewayConfig(**QUICK), RedisStore(REDIS_URL, prefix), runner)
        gateway.register(FeishuAdapter(settings, gateway))
        await gateway.start()
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
        built.append((gateway, http))
        return gateway, http

    yield replica
    for gateway, http in built:
        await http.aclose()
        await gateway.stop(grace=0)
    await delete_prefix(REDIS_URL, prefix)


async def test_a_reply_posted_before_the_crash_is_shown_once(replicas: Any, fake_api: FakeOpenApi):
    one, http = await replicas("the answer")
    fake_api.hold = threading.Event()
    body, headers = signed(message_event("hello"))
    assert (await http.post("/feishu/events", content=body, headers=headers)).status_code == 200
    await eventually(fake_api.message_arrived.is_set)
    await abandon(one)  # killed while Feishu takes the reply: its mark is never written
    fake_api.hold.set()
    await eventually(lambda: len(fake_api.shown()) == 1)
    fake_api.hold = None

    two, _ = await replicas("the answer")
    await eventually(lambda: len(fake_api.posted()) >= 2)  # the takeover sent it again
    await eventually(lambda: two.pool.busy == 0)

    first, again = fake_api.posted()[0].body, fake_api.posted()[1].body
    assert again["uuid"] == first["uuid"]  # the same key on the other replica
    assert len(fake_api.shown()) == 1  # so Feishu shows it once
