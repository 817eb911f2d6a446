"""Own graphs that shorten their thread in a turn (``RemoveMessage``), in process and on a
LangGraph server: the turn's replies are the messages its run added, found by id, whether the
turn is a new message, an answer that resumes the run, or a *Continue* past a breakpoint (README,
Your own graph: "the AI messages without tool calls that follow are the replies")."""

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


@pytest.fixture
async def runners(
    request: pytest.FixtureRequest, tmp_path: Path, clean_environment: Any
) -> AsyncIterator[Runners]:
    """``runners(where, graph)``: a runner on ``graph`` of ``tests/agent/user_graphs.py``, in this
    process or on the test LangGraph server (started only for the tests that ask for it)."""
    made: list[AgentRunner] = []

    def make(where: str, graph: str) -> AgentRunner:
        runner: AgentRunner
        if where == "server":
            runner = runner_for(request.getfixturevalue("langgraph_server"), graph)
        else:
            path = f"tests.agent.user_graphs:{graph}"
            runner = LangGraphRunner(
                AgentSettings(checkpointer_url="memory://", graph=path, data_dir=str(tmp_path))
            )
        made.append(runner)
        return runner

    yield make
    for runner in made:
        await runner.aclose()


async def _chat(make_gateway: Any, runner: AgentRunner, name: str, *said: str) -> Any:
    """A gateway on ``runner`` and its test chat, where ``said`` were each said and answered."""
    gateway, chat = await make_gateway(MemoryStore(name), runner)
    for text in said:
        await chat.say(text)
        await gateway.drain(timeout=30)
    return gateway, chat


@pytest.mark.parametrize("where", WHERE)
async def test_the_reply_of_a_resumed_run_that_trims_the_thread_is_shown(
    make_gateway: Any, runners: Runners, where: str
) -> None:
    """The answer resumes the run, which drops all but the last two messages as it replies."""
    runner = runners(where, "trimming")
    gateway, chat = await _chat(
        make_gateway, runner, f"trim-resumed-{where}", "note 0", "note 1", "deploy now"
    )
    assert chat.last_request().request.question == "Which region?"
    shown = len(chat.texts())
    assert (await chat.click(0)).accepted
    await gateway.drain(timeout=30)
    assert chat.texts()[shown:] == ["Deploying to eu-west."]


@pytest.mark.parametrize("where", WHERE)
async def test_a_turn_that_replaces_the_persons_message_shows_its_reply_alone(
    make_gateway: Any, runners: Runners, where: str
) -> None:
    """The graph removes the person's message (a redacted copy in its place): the turn's reply is
    still its own, never the thread's earlier replies again."""
    runner = runners(where, "trimming")
    gateway, chat = await _chat(make_gateway, runner, f"trim-fresh-{where}", "note 0", "note 1")
    assert chat.texts() == ["noted: note 0", "noted: note 1"]
    await chat.say("my password is hunter2")
    await gateway.drain(timeout=30)
    assert chat.texts()[2:] == ["I hid your password."]


@pytest.mark.parametrize("where", WHERE)
async def test_going_on_past_a_breakpoint_into_a_step_that_trims_shows_its_reply(
    make_gateway: Any, runners: Runners, where: str
) -> None:
    """*Continue* runs the step the graph paused before, which drops every earlier message."""
    runner = runners(where, "tidy_after_pause")
    gateway, chat = await _chat(make_gateway, runner, f"trim-paused-{where}", "hello", "hi again", "tidy up")
    assert chat.texts() == ["echo: hello", "echo: hi again"]
    assert [o.label for o in chat.last_request().request.options] == ["Continue", "Stop"]
    assert (await chat.click(0)).accepted
    await gateway.drain(timeout=30)
    assert chat.texts()[2:] == ["Tidied up."]
