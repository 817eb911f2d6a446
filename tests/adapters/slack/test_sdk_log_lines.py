"""slack_sdk builds no DEBUG line per Web API call unless its loggers are lowered to DEBUG."""

from __future__ import annotations

import logging

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from tests.log_capture import captured_logs

from .conftest import MakeWorld

CLIENT_LOGGER = "slack_sdk.web.async_base_client"


@pytest.mark.parametrize(("chatty", "built"), [(False, False), (True, True)])
async def test_web_api_calls_build_debug_lines_only_when_asked(
    make_world: MakeWorld, monkeypatch: pytest.MonkeyPatch, chatty: bool, built: bool
):
    # slack_sdk tests ``logger.level`` (not ``isEnabledFor``) before formatting each request and
    # response: with that level unset, every call paid for lines logging then dropped
    logger = logging.getLogger(CLIENT_LOGGER)
    debug_lines: list[str] = []
    monkeypatch.setattr(logger, "debug", lambda message, *a, **k: debug_lines.append(str(message)))
    with captured_logs([], level=logging.INFO, chatty_libraries=chatty):
        world = await make_world(ScriptedRunner(lambda turn: TurnOutput(replies=["done"])))
        response, _ = await world.user.dm("hello")
        assert response.status_code == 200
        await world.settle()
    assert world.fake.last_shown()["text"] == "done"
    assert any(line.startswith("Sending a request") for line in debug_lines) is built
