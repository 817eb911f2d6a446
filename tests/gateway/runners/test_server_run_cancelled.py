"""``/cancel`` of a run going on on a LangGraph server: the server run is cancelled there
(``runs.cancel`` with ``interrupt``), the person reads it stopped once, and the chat goes on."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langgraph_sdk import get_client

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.long_graphs import SLOW_DONE, SLOW_SECONDS
from ..langgraph_server.process import LangGraphServer
from .test_server_stopped_runs import DELETED, _running, _server_thread


async def test_cancel_stops_the_run_on_the_server(
    langgraph_server: LangGraphServer, make_gateway: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="clarigate.gateway.runners")
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="slow_if"))
    client = get_client(url=langgraph_server.url)
    try:
        gateway, chat = await make_gateway(MemoryStore("cancelled-on-server"), runner)
        await chat.say("do the slow cleanup", chat="cancel-server")
        sid = await _server_thread(gateway, chat, "cancel-server")
        await _running(client, sid)
        await chat.say("/cancel", chat="cancel-server")
        await gateway.drain(timeout=60)
        assert chat.texts() == ["■ Stopped. What was already done stays done."]
        said = [(r.levelname, r.getMessage()) for r in caplog.records if "server thread" in r.getMessage()]
        assert [level for level, text in said if "stopped by /cancel" in text] == ["INFO"]
        assert not [text for _, text in said if "gave up on it" in text]  # that is for runs timed out
        await chat.say("hello", chat="cancel-server")
        await gateway.drain(timeout=60)
        assert chat.texts()[1:] == ["echo: hello"]
        await asyncio.sleep(SLOW_SECONDS)  # the slow job's time, had it gone on
        assert [run["status"] for run in await client.runs.list(sid)] == ["success", "interrupted"]
        assert DELETED not in langgraph_server.tool_calls()
        said = [m["content"] for m in (await client.threads.get_state(sid))["values"]["messages"]]
        assert SLOW_DONE not in said
    finally:
        await client.http.client.aclose()
        await runner.aclose()
