"""A graph's own ``interrupt()`` with ``{"label": …, "value": …}`` options on Slack: the real
slack-bolt adapter against the fake Slack, a real LangGraph graph; the buttons show the labels,
and a click (or the label typed as a reply) resumes the graph with the option's value."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import user_graphs

from .conftest import MakeWorld


@pytest.fixture
async def runner() -> AsyncIterator[Any]:
    user_graphs.ANSWERS.clear()
    made = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:environments")
    )
    yield made
    await made.aclose()


async def test_a_click_resumes_the_graph_with_the_options_value(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("deploy it")
    await world.settle()
    question = world.fake.posted()
    buttons = [e for b in question["blocks"] for e in b.get("elements", []) if e.get("type") == "button"]
    assert [b["text"]["text"] for b in buttons][:2] == ["Production (EU)", "Staging"]
    assert "prod-eu-1" not in json.dumps(question["blocks"])  # the person sees labels only
    await world.user.click(question, "clarigate:o1")
    await world.settle()
    [answer] = user_graphs.ANSWERS
    assert answer["response_kind"] == "option" and answer["option_id"] == "option-1"
    assert answer["value"] == "prod-eu-1"
    assert world.fake.last_shown()["text"] == "Deploying to prod-eu-1."


async def test_the_label_typed_as_a_reply_resumes_the_graph_with_the_options_value(
    make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner)
    await world.user.dm("deploy it")
    await world.settle()
    await world.user.dm("Staging")
    await world.settle()
    [answer] = user_graphs.ANSWERS
    assert (answer["response_kind"], answer["value"]) == ("option", "stage-2")
    assert world.fake.last_shown()["text"] == "Deploying to stage-2."
