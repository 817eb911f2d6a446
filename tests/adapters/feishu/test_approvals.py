"""Approvals (``agent.require_approval``) and a user graph's ``interrupt()`` on Feishu: real
lark-oapi against the fake open API, the real LangGraph agent (scripted model)."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.adapters.approval_agent import delete_records_agent
from tests.agent import user_graphs

from .cards import button, payload, text_of
from .events import card_action, message_event


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Any) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit", "reject"], "Finished.")
    yield made
    await made.aclose()


async def _asked(bot: Any, text: str = "clean up the users table") -> tuple[str, dict[str, Any]]:
    await bot.deliver(message_event(text))
    await bot.gateway.drain()
    return list(bot.api.cards.items())[-1]


async def test_approve_by_click_runs_the_tool_once(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    assert "delete_records" in text_of(card) and user_graphs.RAN == []
    approve = payload(button(card, "Approve"))
    reply = await bot.click(card_action(approve, message_id=message_id))
    assert "Answered by <at id=ou_alice></at>: Approve" in text_of(reply["card"]["data"])
    await bot.gateway.drain()
    again = await bot.click(card_action(approve, message_id=message_id))
    assert again["toast"]["content"] == "You already answered this question."
    await bot.gateway.drain()
    assert user_graphs.RAN == ["delete users 5"]
    assert text_of(bot.api.shown()[-1]) == "Finished."


async def test_reject_by_click_never_runs_the_tool(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    await bot.click(card_action(payload(button(card, "Reject")), message_id=message_id))
    await bot.gateway.drain()
    assert user_graphs.RAN == []
    assert text_of(bot.api.shown()[-1]) == "Finished."


async def test_edit_through_the_card_form_runs_the_edited_call(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    await bot.click(card_action(payload(button(card, "Edit")), message_id=message_id))
    await bot.gateway.drain()
    form_id, form = list(bot.api.cards.items())[-1]
    assert "Edit the arguments of delete_records" in text_of(form)
    submit = payload(button(form, "Submit"))  # f1: table (left empty: kept), f2: limit
    ok = await bot.click(card_action(submit, tag="button", form_value={"f2": "2"}, message_id=form_id))
    assert ok["toast"]["type"] == "success"
    await bot.gateway.drain()
    assert user_graphs.RAN == ["delete users 2"]


async def test_a_user_graph_interrupt_answered_by_click(make_bot: Any) -> None:
    graph = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:make_graph")
    )
    try:
        bot = await make_bot(graph)
        message_id, card = await _asked(bot, "deploy")
        assert "Which region?" in text_of(card)
        await bot.click(card_action(payload(button(card, "us-east")), message_id=message_id))
        await bot.gateway.drain()
        assert user_graphs.RAN == ["us-east"]
        assert text_of(bot.api.shown()[-1]) == "Deployed to us-east."
    finally:
        await graph.aclose()
