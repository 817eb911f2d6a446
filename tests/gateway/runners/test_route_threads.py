"""README, Routes: "Changing a chat's route starts its next message on the new agent without the
old history": each agent keeps a thread of its own for a chat (``runners.routed.route_thread``),
in one checkpointer or on one LangGraph server alike, and an answer to a question the chat's
previous agent asked is not passed on to the new one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import InboundAnswer, Sender
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.routed import RoutedRunner
from clarigate.gateway.runners.server import server_thread_id
from clarigate.gateway.runtime.app import build_runner
from clarigate.gateway.runtime.routes import Route, RouteMatch
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs
from tests.conftest import config_for_tests

PLAIN = "tests.agent.user_graphs:plain"  # replies "echo: <text>"
ASKING = "tests.agent.user_graphs:make_graph"  # asks "Which region?" (eu-west / us-east), then deploys
COUNTING = "tests.gateway.runners.route_graphs:counting"  # replies with the messages it has read
AFTER_RESTART = "That answer was for the conversation before it was restarted, so I did not pass it on."
STOPPED = (  # after its Cancel button: the closing said it was cancelled
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)


@pytest.fixture(autouse=True)
def _clean(clean_environment: Any) -> None:
    """No operator variables from the machine."""


def _moved(agent: dict[str, Any]) -> dict[str, Any]:
    """The bot's settings once the operator sends chat g1 to the ``ops`` route's graph."""
    return {
        "agent": agent,
        "routes": [{"name": "ops", "match": {"chat": "g1"}, "agent": {"graph": COUNTING}}],
    }


async def _say_before_the_move(
    make_gateway: Any, store: MemoryStore, agent: dict[str, Any], text: str
) -> Any:
    """``text`` said in chat g1 while the ``agent:`` section answers it (no routes); the adapter."""
    runner = build_runner(config_for_tests(agent=agent))
    try:
        gateway, adapter = await make_gateway(store, runner, agent=agent)
        await adapter.say(text, user="u1", chat="g1", direct=False)
        await gateway.drain()
        await gateway.stop(grace=0)
        return adapter
    finally:
        await runner.aclose()


async def test_a_chat_moved_to_another_route_starts_without_the_old_history(
    make_gateway: Any, tmp_path: Path
) -> None:
    store = MemoryStore("route-move")
    agent = {"graph": PLAIN, "checkpointer_url": f"sqlite:{tmp_path / 'checkpoints.db'}"}
    before = await _say_before_the_move(make_gateway, store, agent, "my password is hunter2")
    assert before.texts("g1") == ["echo: my password is hunter2"]
    # the operator sends chat g1 to another agent from now on (the checkpointer shared), and restarts
    runner = build_runner(config_for_tests(**_moved(agent)))
    try:
        gateway, adapter = await make_gateway(store, runner, **_moved(agent))
        await adapter.say("status?", user="u1", chat="g1", direct=False)
        await gateway.drain()
        assert adapter.texts("g1")[-1] == "I have read 1 message(s): ['status?']"
    finally:
        await runner.aclose()


@pytest.mark.parametrize("decline", [False, True])
async def test_a_click_on_the_previous_agents_question_is_not_passed_on_to_the_new_one(
    make_gateway: Any, tmp_path: Path, decline: bool
) -> None:
    store = MemoryStore("route-move-question")
    agent = {"graph": ASKING, "checkpointer_url": f"sqlite:{tmp_path / 'checkpoints.db'}"}
    before = await _say_before_the_move(make_gateway, store, agent, "deploy please")
    asked = before.last_request()
    assert asked.request.question == "Which region?"
    deployed = list(user_graphs.RAN)
    runner = build_runner(config_for_tests(**_moved(agent)))
    try:
        gateway, adapter = await make_gateway(store, runner, **_moved(agent))
        click = InboundAnswer(
            sender=Sender(user_id="u1"),
            event_id="click-after-move",
            token=asked.token,
            option_id=None if decline else asked.request.options[0].id,
            decline=decline,
            conversation=before.conversation("g1", direct=False),
        )
        await gateway.submit_answer(click)
        await gateway.drain()
        # neither agent ran it: the new one never asked, the old one no longer answers the chat
        assert adapter.texts("g1") == [STOPPED if decline else AFTER_RESTART]
        # the gateway's words, not an answer of the agent's: nothing to vote on
        assert [item.feedback for _, item in adapter.sent if isinstance(item, TextReply)] == [None]
        assert user_graphs.RAN == deployed
        await adapter.say("status?", user="u1", chat="g1", direct=False)
        await gateway.drain()
        assert adapter.texts("g1")[-1] == "I have read 1 message(s): ['status?']"
    finally:
        await runner.aclose()


class _Agent(ScriptedRunner):
    """A scripted agent that also says which question a thread waits for."""

    def __init__(self, waiting: dict[str, HumanInputRequest] | None = None) -> None:
        super().__init__()
        self.waiting = waiting or {}

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        return self.waiting.get(thread_id)


def _run(chat: str, response: Any = None) -> RunInput:
    conversation = {"platform": "test", "chat_id": chat, "chat_type": "group"}
    return RunInput("t1", "hi", response, speaker={"conversation": conversation})  # type: ignore[typeddict-item]


async def test_each_agent_keeps_its_own_thread_of_a_chat_the_default_one_the_chats_id() -> None:
    """Every method that names a thread: the ``agent:`` section's keeps the chat's thread id (its
    threads from before routes keep their history), a route's is its own, so is its server thread."""
    asked = HumanInputRequest(request_id="r1", tool_call_id="c1", question="Which region?")
    default, ops = _Agent(), _Agent({"ops:t1": asked})
    routed = RoutedRunner(default, [(Route(name="ops", match=RouteMatch(chat=["g2"])), ops)])
    await routed.run_turn(_run("g1"))
    await routed.run_turn(_run("g2"))
    assert [c.thread_id for c in default.calls] == ["t1"] and [c.thread_id for c in ops.calls] == ["ops:t1"]
    assert server_thread_id("ops:t1") != server_thread_id("t1")  # one server for both: two threads
    assert await routed.pending_request("t1") == asked
    await routed.delete_thread("t1")
    assert default.deleted == ["t1"] and ops.deleted == ["ops:t1"]


async def test_a_routes_open_question_is_found_again_as_its_agent_asked_it(
    make_gateway: Any, tmp_path: Path
) -> None:
    """``clarigate chat`` going on with a question a route's agent asked: its long text in full
    above it, as the turn showed it (``pending_asked``), found in that agent's thread of the chat."""
    agent = {"graph": PLAIN, "checkpointer_url": f"sqlite:{tmp_path / 'checkpoints.db'}"}
    routes = [{"name": "ops", "match": {"chat": "g1"}, "agent": {"graph": "tests.agent.user_graphs:plan"}}]
    runner = build_runner(config_for_tests(agent=agent, routes=routes))
    try:
        gateway, adapter = await make_gateway(MemoryStore("route-asked"), runner, agent=agent, routes=routes)
        await adapter.say("migrate", user="u1", chat="g1", direct=False)
        await gateway.drain()
        [in_full] = adapter.texts("g1")  # the plan, in full above its question
        thread_id = await gateway.store.thread_for_chat(
            adapter.conversation("g1", direct=False).thread_key, 3600
        )

        asked = await runner.pending_asked(thread_id)

        assert asked is not None and asked.in_full == in_full and user_graphs.PLAN.splitlines()[1] in in_full
        assert asked.request == adapter.last_request().request
        assert (await runner.pending_request(thread_id)).request_id == asked.request.request_id
    finally:
        await runner.aclose()
