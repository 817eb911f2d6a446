"""The default runner: the real LangGraph agent (offline model) behind the gateway, end to end."""

from __future__ import annotations

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.base import Store


async def test_question_click_and_answer_through_the_real_agent(store: Store, make_gateway, tmp_path):
    runner = LangGraphRunner(
        AgentSettings(model="offline", checkpointer_url="memory://", data_dir=str(tmp_path))
    )
    assert await runner.ping() is False  # not built yet: not ready
    gateway, chat = await make_gateway(store, runner)  # start() builds the agent
    assert await runner.ping() is True

    await chat.say("which database?")
    await gateway.drain()
    asked = chat.last_request()
    assert asked.request.input_mode == "choice_with_other" and len(asked.request.options) >= 2
    assert asked.fallback_text.strip()
    picked = asked.request.options[1]

    outcome = await chat.click(1)
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED
    assert picked.label in chat.texts()[-1]
    view = await gateway.pending_by_token(asked.token)
    assert view.status == "answered" and view.message_ref is not None  # the question's message is known
    await runner.aclose()
