"""``require_approval`` with ``summarize_after_tokens``: the approved tool's long result makes the
next model call summarize the thread (LangChain's ``SummarizationMiddleware`` replaces the message
list with a summary and the recent messages), and the model's answer after it is still the turn's
reply, found by id; the tool runs once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import answer_message_text, parse_typed_reply
from tests.agent import summarized_threads
from tests.agent.conftest import AgentFactory
from tests.agent.summarized_threads import ReadingModel

TOOL = "tests.agent.summarized_threads:export_table"
APPROVAL = {"export_table": ["approve", "reject"]}


@pytest.fixture(autouse=True)
def _nothing_ran() -> None:
    summarized_threads.RAN.clear()


async def test_the_reply_after_an_approval_survives_summarization(make_agent: AgentFactory) -> None:
    agent = await make_agent(
        ReadingModel(), tool_paths=(TOOL,), require_approval=APPROVAL, summarize_after_tokens=1000
    )
    for n in range(8):  # a thread of short turns, well under the threshold
        assert (await agent.run_turn("t", f"hello {n}")).replies == ["ok"]
    asked = await agent.run_turn("t", "clean up users")
    assert asked.request is not None, asked
    reply = parse_typed_reply(asked.request, "approve", None)
    assert reply.response is not None, reply.problems
    text = answer_message_text(asked.request, reply.response)
    done = await agent.run_turn("t", text, reply.response)
    assert summarized_threads.RAN == ["export users"]
    history = await agent.history("t")
    assert "summary of earlier turns" in history[0].text and len(history) < 16  # summarized
    assert history[-1].text == "Exported users."
    assert done.replies == ["Exported users."]


async def test_the_person_who_approves_reads_the_answer_not_an_error(
    make_gateway: Any, tmp_path: Path
) -> None:
    """Through the gateway: the person approves, the tool runs once, and they read the answer."""
    from clarigate.gateway.runners.in_process import LangGraphRunner
    from clarigate.gateway.store.memory import MemoryStore

    settings = AgentSettings(
        checkpointer_url="memory://",
        data_dir=str(tmp_path),
        tools=(TOOL,),
        require_approval=APPROVAL,
        summarize_after_tokens=1000,
    )
    runner = LangGraphRunner(settings, agent=await ClarifyingAgent.create(settings, model=ReadingModel()))
    try:
        gateway, chat = await make_gateway(MemoryStore("summarized-approval"), runner)
        for n in range(8):
            await chat.say(f"hello {n}")
            await gateway.drain()
        await chat.say("clean up users")
        await gateway.drain()
        assert [o.label for o in chat.last_request().request.options] == ["Approve", "Reject"]
        shown = len(chat.texts())
        assert (await chat.click(0)).accepted
        await gateway.drain()
        assert summarized_threads.RAN == ["export users"]
        assert chat.texts()[shown:] == ["Exported users."]
    finally:
        await runner.aclose()
