"""A graph's own ``interrupt()`` whose options are ``{"label": …, "value": …}`` objects, through the
gateway: the person sees the labels, and a pick (a click, the option's number or its label typed
as a reply) resumes the graph with the option's value, in process and on a LangGraph server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs

from .test_server_runner import runner_for

#: The ways a person picks an option, and the environment each picks.
PICKS: list[tuple[str, Callable[[Any], Awaitable[Any]], str]] = [
    ("click", lambda chat: chat.click(0), "prod-eu-1"),
    ("number", lambda chat: chat.reply("2"), "stage-2"),
    ("label", lambda chat: chat.reply("production (eu)"), "prod-eu-1"),
]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.ANSWERS.clear()


@pytest.mark.parametrize(("how", "pick", "value"), PICKS, ids=[p[0] for p in PICKS])
async def test_a_pick_resumes_the_graph_with_the_options_value_in_process(
    make_gateway: Any, how: str, pick: Callable[[Any], Awaitable[Any]], value: str
) -> None:
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:environments")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore(f"picked-{how}"), runner)
        await chat.say("deploy it")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert [o.label for o in asked.options] == ["Production (EU)", "Staging"]  # what the person sees
        await pick(chat)
        await gateway.drain(timeout=30)
        [answer] = user_graphs.ANSWERS
        assert (answer["response_kind"], answer["value"]) == ("option", value)
        assert chat.texts()[-1] == f"Deploying to {value}."
    finally:
        await runner.aclose()


async def test_a_pick_resumes_the_graph_with_the_options_value_on_the_server(
    langgraph_server: Any, make_gateway: Any
) -> None:
    runner = runner_for(langgraph_server, "environments")
    gateway, chat = await make_gateway(MemoryStore("lg-picked"), runner)
    try:
        await chat.say("deploy it", chat="picked-click")
        await gateway.drain(timeout=30)
        assert [o.label for o in chat.last_request().request.options] == ["Production (EU)", "Staging"]
        await chat.click(0)
        await gateway.drain(timeout=30)
        assert chat.texts(chat="picked-click")[-1] == "Deploying to prod-eu-1."

        await chat.say("deploy it", chat="picked-typed")
        await gateway.drain(timeout=30)
        await chat.reply("Staging")
        await gateway.drain(timeout=30)
        assert chat.texts(chat="picked-typed")[-1] == "Deploying to stage-2."
    finally:
        await runner.aclose()
