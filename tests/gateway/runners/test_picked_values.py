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


#: The ways a person picks the second option of each question of ``user_graphs.service``.
SECOND: list[tuple[str, Callable[[Any], Awaitable[Any]]]] = [
    ("click", lambda chat: chat.click(1)),
    ("number", lambda chat: chat.reply("2")),
    ("label", lambda chat: chat.reply(chat.last_request().request.options[1].label.lower())),
]


@pytest.mark.parametrize(("how", "pick"), SECOND, ids=[p[0] for p in SECOND])
async def test_an_options_value_that_is_not_text_resumes_the_graph_as_given(
    make_gateway: Any, how: str, pick: Callable[[Any], Awaitable[Any]]
) -> None:
    """Options ``{"label": "Off", "value": False}`` and ``{"label": "Three replicas", "value":
    3}``: the graph gets ``False`` and ``3``, not ``"false"`` (a truthy string: the cache would be
    switched on) and ``"3"``."""
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:service")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore(f"picked-typed-{how}"), runner)
        await chat.say("set up the service")
        await gateway.drain(timeout=30)
        assert [o.label for o in chat.last_request().request.options] == ["On", "Off"]
        await pick(chat)
        await gateway.drain(timeout=30)
        assert [o.label for o in chat.last_request().request.options] == ["One replica", "Three replicas"]
        await pick(chat)
        await gateway.drain(timeout=30)
        assert user_graphs.ANSWERS == [(False, 3)]
        assert chat.texts()[-1] == "Cache False, replicas 3."
    finally:
        await runner.aclose()


FORM_ANSWERS: list[tuple[str, Callable[[Any], Awaitable[Any]]]] = [
    ("submitted", lambda chat: chat.submit({"cache": "false", "replicas": ["1", "3"], "region": "EU"})),
    ("typed", lambda chat: chat.reply("cache: Off\nreplicas: One replica, Three replicas\nregion: EU")),
]


@pytest.mark.parametrize(("how", "answer"), FORM_ANSWERS, ids=[a[0] for a in FORM_ANSWERS])
async def test_a_forms_select_and_multi_select_resume_with_the_values_as_given(
    make_gateway: Any, how: str, answer: Callable[[Any], Awaitable[Any]]
) -> None:
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:service_form")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore(f"picked-form-{how}"), runner)
        await chat.say("set up the service")
        await gateway.drain(timeout=30)
        assert chat.last_request().request.input_mode == "form"
        await answer(chat)
        await gateway.drain(timeout=30)
        assert user_graphs.ANSWERS == [
            {"cache": False, "replicas": [1, 3], "region": {"region": "eu", "zone": 2}}
        ]
        assert chat.texts()[-1] == "Configured."
    finally:
        await runner.aclose()
