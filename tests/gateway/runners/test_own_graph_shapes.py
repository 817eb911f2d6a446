"""Own graphs of shapes the start check accepts, run with streaming off (the test chat has no live
mode), in process and on a LangGraph server: parallel branches where one replies while the other
asks (each reply shown once), an output schema without ``messages`` (the replies are read from
the whole state), and a ``messages`` key without a reducer (refused at start, saying what to
change)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .test_server_runner import runner_for

WHERE = ["in_process", "server"]
Runners = Callable[[str, str], AgentRunner]


def in_process(graph: str, tmp_path: Path) -> LangGraphRunner:
    path = f"tests.agent.branch_graphs:{graph}"
    return LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=path, data_dir=str(tmp_path)))


@pytest.fixture
async def runners(
    request: pytest.FixtureRequest, tmp_path: Path, clean_environment: Any
) -> AsyncIterator[Runners]:
    """``runners(where, graph)``: a runner on ``graph`` of ``tests/agent/branch_graphs.py``, in this
    process or on the test LangGraph server (started only for the tests that ask for it)."""
    made: list[AgentRunner] = []

    def make(where: str, graph: str) -> AgentRunner:
        server = request.getfixturevalue("langgraph_server") if where == "server" else None
        runner = runner_for(server, graph) if server is not None else in_process(graph, tmp_path)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        await runner.aclose()


async def _answer(gateway: Any, chat: Any, label: str) -> None:
    request = chat.last_request().request
    assert (await chat.click([o.label for o in request.options].index(label))).accepted
    await gateway.drain(timeout=30)


@pytest.mark.parametrize("where", WHERE)
async def test_a_branch_that_replied_while_another_asked_is_shown_once(
    make_gateway: Any, runners: Runners, where: str
) -> None:
    gateway, chat = await make_gateway(MemoryStore(f"branch-reply-{where}"), runners(where, "reply_and_ask"))
    await chat.say("order a shirt")
    await gateway.drain(timeout=30)
    assert chat.texts() == ["Branch A finished."]
    assert chat.last_request().request.question == "Size?"
    await _answer(gateway, chat, "S")
    assert chat.texts() == ["Branch A finished.", "size=S"]


@pytest.mark.parametrize("where", WHERE)
async def test_two_branches_asking_in_turn_show_each_reply_once(
    make_gateway: Any, runners: Runners, where: str
) -> None:
    gateway, chat = await make_gateway(MemoryStore(f"branch-asks-{where}"), runners(where, "two_asks"))
    await chat.say("order a shirt")
    await gateway.drain(timeout=30)
    assert chat.last_request().request.question == "Size?"
    await _answer(gateway, chat, "L")
    assert chat.texts() == ["size=L"] and chat.last_request().request.question == "Colour?"
    await _answer(gateway, chat, "blue")
    assert chat.texts() == ["size=L", "colour=blue"]
    await chat.say("thanks")  # a later turn starts afresh: nothing of the earlier ones again
    await gateway.drain(timeout=30)
    assert chat.texts()[:2] == ["size=L", "colour=blue"] and chat.last_request().request.question == "Size?"


async def test_an_output_schema_without_messages_still_shows_the_replies(
    make_gateway: Any, runners: Runners
) -> None:
    gateway, chat = await make_gateway(MemoryStore("answer-output"), runners("in_process", "answer_output"))
    for text in ("hello", "again"):
        await chat.say(text)
        await gateway.drain(timeout=30)
    assert chat.texts() == ["echo: hello", "echo: again"]


async def test_messages_without_a_reducer_stop_the_start_saying_what_to_change(tmp_path: Path) -> None:
    runner = in_process("no_reducer", tmp_path)
    with pytest.raises(ValueError, match="no_reducer") as raised:
        await runner.start()
    assert "Annotated[list[AnyMessage], add_messages]" in str(raised.value)
    assert "\n" not in str(raised.value)
    await runner.aclose()
