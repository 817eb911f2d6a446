"""A graph's own ``interrupt()`` asking with a pydantic model or a dataclass, through the gateway in
process: the person is asked its question (its options as buttons, its other fields as context),
not a quoted repr, and the graph is resumed with the answer's payload, as for the same dict."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.ANSWERS.clear()


def _runner(graph: str) -> LangGraphRunner:
    return LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.user_graphs:{graph}")
    )


async def test_a_pydantic_interrupt_asks_with_buttons_and_a_click_resumes_with_the_option(
    make_gateway: Any,
) -> None:
    runner = _runner("region_model")
    try:
        gateway, chat = await make_gateway(MemoryStore("model-region"), runner)
        await chat.say("deploy it")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert asked.question == "Which region?"
        assert [o.label for o in asked.options] == ["eu-west", "us-east"]
        await chat.click(1)
        await gateway.drain(timeout=30)
        [answer] = user_graphs.ANSWERS
        assert (answer["response_kind"], answer["value"]) == ("option", "us-east")
        assert chat.texts()[-1] == "Deployed to us-east."
    finally:
        await runner.aclose()


async def test_a_dataclass_review_asks_its_question_with_the_output_to_review(make_gateway: Any) -> None:
    runner = _runner("sql_review")
    try:
        gateway, chat = await make_gateway(MemoryStore("model-review"), runner)
        await chat.say("clean up user 7")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert asked.question == "Is this SQL OK?"
        assert asked.context == "DELETE FROM users WHERE id = 7"
        await chat.reply("yes, run it")
        await gateway.drain(timeout=30)
        [answer] = user_graphs.ANSWERS
        assert (answer["response_kind"], answer["value"]) == ("text", "yes, run it")
        assert chat.texts()[-1] == "Review: yes, run it"
    finally:
        await runner.aclose()
