"""``serve --log-level debug``: more about the gateway, nothing of what people wrote.

The data directory is kept private because it holds what people wrote; the log is read by
whoever reads logs. The libraries that print payloads at debug (aiosqlite every checkpoint blob,
MCP's client every tool call, LangSmith its runs) stay at WARNING even then.
"""

from __future__ import annotations

import logging
from pathlib import Path

from clarigate.adapters.testing import TestAdapter
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.app import build_runner, close_gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests
from tests.log_capture import captured_logs

WRITTEN = "my plan is zebra-quartz-77 tonight"


async def test_a_debug_run_on_the_in_process_agent_logs_nothing_a_person_wrote(tmp_path: Path) -> None:
    config = config_for_tests(data_dir=str(tmp_path), agent={"model": "offline"})
    with captured_logs([], level=logging.DEBUG) as logs:  # as `serve --log-level debug` sets it up
        gateway = Gateway(config, MemoryStore("debug-logs"), build_runner(config))
        chat = TestAdapter(gateway)
        gateway.register(chat)
        try:
            await gateway.runner.start()  # the SQLite checkpointer, through aiosqlite
            await gateway.start()
            await chat.say(WRITTEN, chat="ops")
            await gateway.drain()
        finally:
            await gateway.stop(grace=0)
            await close_gateway(gateway)
    assert "zebra-quartz-77" in chat.texts()[-1]  # the agent read it and answered
    assert any("run finished" in line for line in logs.lines())  # the run was logged
    leaked = [line for line in logs.lines() if "zebra-quartz" in line]
    assert leaked == [], leaked[:3]
    chatty = {line.split(" ")[3] for line in logs.lines() if " DEBUG " in line}
    assert not chatty & {"aiosqlite:", "langsmith.utils:", "langsmith.client:"}, chatty


def test_a_tool_calls_debug_line_names_its_arguments_not_their_values() -> None:
    from types import SimpleNamespace

    from langchain_core.messages import ToolMessage

    from clarigate.agent.observe import ToolCallLogMiddleware

    call = {"name": "save_note", "args": {"text": WRITTEN, "tags": ["x"]}, "id": "c1"}
    result = ToolMessage(content="saved", tool_call_id="c1")
    with captured_logs([], level=logging.DEBUG) as logs:
        ToolCallLogMiddleware()._log(SimpleNamespace(tool_call=call), 0.0, "ok", result)
    assert any("save_note arguments: ['tags', 'text']" in line for line in logs.lines()), logs.lines()
    assert not [line for line in logs.lines() if "zebra-quartz" in line]
