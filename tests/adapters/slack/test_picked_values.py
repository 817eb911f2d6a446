"""A graph's own ``interrupt()`` with ``{"label": …, "value": …}`` options on Slack: the real
slack-bolt adapter against the fake Slack, a real LangGraph graph; the buttons show the labels,
and a click (or the label typed as a reply) resumes the graph with the option's value."""

from __future__ import annotations

import json
from typing import Any

from tests.agent import user_graphs

from .conftest import MakeWorld


async def test_a_click_resumes_the_graph_with_the_options_value(
    make_world: MakeWorld, environments: Any
) -> None:
    world = await make_world(environments)
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
    make_world: MakeWorld, environments: Any
) -> None:
    world = await make_world(environments)
    await world.user.dm("deploy it")
    await world.settle()
    await world.user.dm("Staging")
    await world.settle()
    [answer] = user_graphs.ANSWERS
    assert (answer["response_kind"], answer["value"]) == ("option", "stage-2")
    assert world.fake.last_shown()["text"] == "Deploying to stage-2."
