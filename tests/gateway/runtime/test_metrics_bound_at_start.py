"""Series an alert adds up are exported (at 0) from a gateway's start, before their first event."""

from __future__ import annotations

import httpx

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime import metrics
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.conftest import config_for_tests


async def test_a_fresh_gateway_exports_deliveries_given_up_at_0_for_its_platform():
    """``ClarigateRepliesGivenUp`` adds deliveries given up to runs given up: without the
    deliveries series (no delivery given up yet) a run given up was an empty sum, never an alert."""
    metrics.DELIVERIES_GIVEN_UP.clear()  # as in a process just started
    config = config_for_tests(telegram={"bot_token": "123:abc"})
    assert config.enabled_platforms() == ["telegram"]
    gateway = Gateway(config, MemoryStore("t"), ScriptedRunner())
    app = build_app(gateway)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw") as http:
        text = (await http.get("/metrics")).text
    lines = [line for line in text.splitlines() if line.startswith("clarigate_deliveries_given_up_total{")]
    assert len(lines) == 1 and 'platform="telegram"' in lines[0], text
    assert lines[0].endswith(" 0.0")
