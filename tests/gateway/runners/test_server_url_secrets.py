"""A key in the LangGraph server's URL (``agent.server_url``, the ``agent:`` section's or a route's)
is in no ``/readyz`` answer and no log line."""

from __future__ import annotations

import logging

import httpx

from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.log_capture import assert_no_secret, captured_logs

from ..langgraph_server.process import free_port

KEY, PASSWORD, ROUTE_KEY = "lg-Key-SEKRET-41c9", "lg-Pass-77aa", "route-Key-0b2e"


async def test_readyz_and_the_log_name_an_unreachable_server_without_its_key(make_gateway) -> None:
    port = free_port()
    url = f"http://gw:{PASSWORD}@127.0.0.1:{port}/lg?api_key={KEY}&tenant=acme"
    route = {
        "name": "ops",
        "match": {"chat": "ops"},
        "agent": {"server_url": f"http://lg2/?token={ROUTE_KEY}"},
    }
    config = GatewayConfig(agent={"server_url": url}, routes=[route])
    runner = LangGraphServerRunner(config.agent)
    gateway, _ = await make_gateway(MemoryStore("lg-ready-key"), runner)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
    with captured_logs(config.secret_values(), level=logging.DEBUG) as logs:  # as `serve` registers them
        response = await client.get("/readyz")
        # a library's error quoting the key it was given, bare
        logging.getLogger("langgraph_sdk").error("key %s refused; key %s refused", KEY, ROUTE_KEY)
    await client.aclose()
    await runner.aclose()
    assert response.status_code == 503
    where = f"http://127.0.0.1:{port}/lg?api_key=***&tenant=acme"
    assert response.json()["failed"] == {"agent_server": f"unreachable ({where})"}
    assert any(f"not ready: agent_server unreachable ({where})" in line for line in logs.lines())
    assert any("key *** refused; key *** refused" in line for line in logs.lines()), logs.lines()
    assert_no_secret(logs, [KEY, PASSWORD, ROUTE_KEY])
