"""Through the gateway, in process: a Cancel or a new message never resumes a JSON-Schema typed
interrupt with a value its schema does not allow (LangGraph checks only Pydantic, ``TypedDict`` and
dataclass schemas). A schema that does not take the declined answer closes the question: the
person is told the task stopped, and a new message runs over it; one that takes it is resumed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import resume_graphs

STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)


@asynccontextmanager
async def _graph(make_gateway: Any, graph: str) -> AsyncIterator[tuple[Any, Any, LangGraphRunner]]:
    resume_graphs.RESUMED.clear()
    settings = AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.resume_graphs:{graph}")
    runner = LangGraphRunner(settings)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"declines-{graph}"), runner)
        yield gateway, chat, runner
    finally:
        await runner.aclose()


async def test_cancel_on_a_yes_no_question_closes_it_never_resuming_it_with_the_declined_answer(
    make_gateway: Any,
) -> None:
    async with _graph(make_gateway, "make_yes_no") as (gateway, chat, runner):
        await chat.say("deploy")
        await gateway.drain()
        asked = chat.last_request().request
        assert [f.type for f in asked.fields] == ["checkbox"]
        await chat.cancel()
        await gateway.drain()
        assert resume_graphs.RESUMED == []  # never the declined payload, a truthy dict: no deploy
        assert chat.texts() == [STOPPED] and not chat.of_kind("error")
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        assert await runner.pending_request(thread_id) is None  # closed, not reported open again

        await chat.say("deploy after all")  # runs over the closed question: asked afresh
        await gateway.drain()
        again = chat.last_request().request
        assert again.request_id != asked.request_id and resume_graphs.RESUMED == []


async def test_a_new_message_over_an_enum_question_runs_never_resuming_it_with_its_text(
    make_gateway: Any,
) -> None:
    async with _graph(make_gateway, "make_region") as (gateway, chat, _):
        await chat.say("deploy")
        await gateway.drain()
        asked = chat.last_request().request
        await chat.say("actually, what time is it?")
        await gateway.drain()
        assert resume_graphs.RESUMED == []  # never "(declined to answer)", not one of its values
        assert chat.last_request().request.request_id != asked.request_id  # the message ran
        assert not chat.of_kind("error")


async def test_cancel_on_a_question_whose_schema_takes_the_declined_answer_resumes_it(
    make_gateway: Any,
) -> None:
    async with _graph(make_gateway, "make_why") as (gateway, chat, _):
        await chat.say("deploy")
        await gateway.drain()
        await chat.cancel()
        await gateway.drain()
    [resumed] = resume_graphs.RESUMED
    assert resumed["response_kind"] == "declined" and resumed["reason"] == "cancelled"
    assert chat.texts() == ["Because: cancelled."]
