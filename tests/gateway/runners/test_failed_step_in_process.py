"""Through the gateway, in process: an operator's graph whose step fails after the person's answer
leaves its interrupt behind; the next message supersedes it, LangGraph replays the failed step
with the saved answer and it fails again. That failure is logged once, with its traceback, and the
message runs (as on a LangGraph server): the chat is not broken until ``/new``, and no later
message replays the failed step."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import resume_graphs

FAILED = "Sorry, I could not finish that: something went wrong on my side. Please try again."


async def test_a_step_that_failed_after_an_answer_does_not_fail_every_later_message(
    make_gateway: Any, caplog: pytest.LogCaptureFixture
) -> None:
    resume_graphs.FAILED.clear()
    settings = AgentSettings(
        checkpointer_url="memory://", graph="tests.agent.resume_graphs:make_fails_after_answer"
    )
    runner = LangGraphRunner(settings)
    try:
        gateway, chat = await make_gateway(MemoryStore("failed-step"), runner)
        await chat.say("deploy")
        await gateway.drain()
        await chat.click(1)  # "us": the step raises after the answer
        await gateway.drain()
        assert chat.texts() == [FAILED]

        with caplog.at_level(logging.WARNING, logger="clarigate.agent.supersede"):
            await chat.say("echo one")
            await gateway.drain()
            await chat.say("echo two")
            await gateway.drain()
    finally:
        await runner.aclose()
    assert chat.texts() == [FAILED, "echo one", "echo two"]  # each message answered, once
    assert resume_graphs.FAILED == ["us", "us"]  # the answer, then its replay when superseded: no more
    [logged] = [r for r in caplog.records if r.name == "clarigate.agent.supersede"]
    assert logged.levelno == logging.WARNING and "the new message runs anyway" in logged.getMessage()
    assert logged.exc_info is not None and str(logged.exc_info[1]) == "us is down"
