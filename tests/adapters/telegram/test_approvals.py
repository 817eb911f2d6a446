"""Approvals (``agent.require_approval``) and a user graph's ``interrupt()`` on Telegram: real
python-telegram-bot against the fake Bot API, the real LangGraph agent (scripted model)."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
import yaml

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.adapters.approval_agent import LONG_QUERY, two_calls_agent
from tests.agent import user_graphs

from .harness import callback_update, message_update, open_bench

DELETE_TURN = {"tool_calls": [{"name": "delete_records", "args": {"table": "users", "limit": 5}}]}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


async def _bench(bot_api: Any, tmp_path: Any, **agent: Any) -> Any:
    if "graph" not in agent:
        script = tmp_path / "script.yaml"
        script.write_text(yaml.safe_dump([DELETE_TURN, {"content": "Finished: {last_user}"}]))
        agent = {
            "model": f"scripted:{script}",
            "tools": ("tests.agent.user_graphs:delete_records",),
            "require_approval": {"delete_records": ["approve", "edit", "reject"]},
            **agent,
        }
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", **agent))
    store = MemoryStore(f"approvals-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    return tg, runner, store


async def _close(tg: Any, runner: Any, store: Any) -> None:
    await tg.close()
    await runner.aclose()
    await store.close()


def _question(bot_api: Any, text: str) -> tuple[int, list[dict[str, Any]]]:
    """The message id and buttons of the last message with a keyboard that says ``text``."""
    sent = bot_api.of("sendMessage")
    index = max(i for i, c in enumerate(sent) if c.markup and text in c.params["text"])
    return 1000 + index, [b for row in sent[index].buttons for b in row]


async def test_approve_by_tap_runs_the_tool_once(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        await tg.deliver(message_update("clean up the users table"))
        message_id, buttons = _question(bot_api, "delete_records")
        assert [b["text"] for b in buttons][:3] == ["⚠️ Approve", "Reject", "Edit"]
        assert user_graphs.RAN == []
        await tg.deliver(callback_update(buttons[0]["callback_data"], message_id))  # asks again
        assert user_graphs.RAN == []
        yes = bot_api.of("editMessageText")[-1].buttons[0][0]
        assert yes["text"] == "⚠️ Yes: Approve"
        await tg.deliver(callback_update(yes["callback_data"], message_id))
        await tg.deliver(callback_update(yes["callback_data"], message_id))  # a second tap
        assert user_graphs.RAN == ["delete users 5"]
        assert "✅ Answered by Alice: Approve" in bot_api.of("editMessageText")[-1].params["text"]
        assert bot_api.of("sendMessage")[-1].params["text"].startswith("Finished")
    finally:
        await _close(tg, runner, store)


async def test_reject_by_tap_never_runs_the_tool(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        await tg.deliver(message_update("clean up the users table"))
        message_id, buttons = _question(bot_api, "delete_records")
        await tg.deliver(callback_update(buttons[1]["callback_data"], message_id))
        assert user_graphs.RAN == []
        assert "Reject" in bot_api.of("editMessageText")[-1].params["text"]
    finally:
        await _close(tg, runner, store)


async def test_edit_through_the_form_wizard_runs_the_edited_call(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path)
    try:
        await tg.deliver(message_update("clean up the users table"))
        message_id, buttons = _question(bot_api, "delete_records")
        await tg.deliver(callback_update(buttons[2]["callback_data"], message_id))
        form_id, form_buttons = _question(bot_api, "Edit the arguments")
        token = form_buttons[0]["callback_data"].split("|")[0]
        await tg.deliver(callback_update(f"{token}|form", form_id))
        step = bot_api.of("editMessageText")[-1].params["text"]
        assert "1/2 · limit" in step and "→ 5" in step  # the current value is shown
        await tg.deliver(message_update("2"))  # limit
        await tg.deliver(callback_update(f"{token}|k", form_id))  # skip: keep "users"
        await tg.deliver(callback_update(f"{token}|S", form_id))  # submit
        assert user_graphs.RAN == ["delete users 2"]
    finally:
        await _close(tg, runner, store)


async def test_a_user_graph_interrupt_answered_by_tap(bot_api: Any, tmp_path: Any) -> None:
    tg, runner, store = await _bench(bot_api, tmp_path, graph="tests.agent.user_graphs:make_graph")
    try:
        await tg.deliver(message_update("deploy"))
        message_id, buttons = _question(bot_api, "Which region?")
        await tg.deliver(callback_update(buttons[1]["callback_data"], message_id))
        assert user_graphs.RAN == ["us-east"]
        assert bot_api.of("sendMessage")[-1].params["text"] == "Deployed to us-east."
    finally:
        await _close(tg, runner, store)


async def test_calls_too_long_for_the_approval_reach_the_person_in_full_first(
    bot_api: Any, tmp_path: Any
) -> None:
    """A long ``run_sql`` and a ``drop_table`` asked at once, one Approve for both: before the
    question the person reads both calls in full, every character as written (no markup taken,
    no mention made), in messages of at most 4096 characters (the fake refuses longer ones)."""
    runner = two_calls_agent(tmp_path)
    store = MemoryStore(f"approvals-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(message_update("how many active customers do we have?"))
        *replies, question = [c.params["text"] for c in bot_api.of("sendMessage")]
        assert len(replies) > 1  # more than one message holds
        code = "".join(html.unescape(re.sub(r"</?pre>", "", text)) for text in replies)
        calls = f'run_sql(query={json.dumps(LONG_QUERY)})\ndrop_table(name="customers")'
        assert re.sub(r"\s", "", code) == re.sub(r"\s", "", calls)  # a cut may fall on a space
        assert "Approve these 2 actions?" in question and "Every call is shown in full above." in question
        assert "run_sql(query=" in question and 'drop_table(name="customers")' in html.unescape(question)
        message_id, buttons = _question(bot_api, "Approve these 2 actions?")
        await tg.deliver(callback_update(buttons[0]["callback_data"], message_id))  # Approve
        yes = bot_api.of("editMessageText")[-1].buttons[0][0]  # "Yes: Approve"
        await tg.deliver(callback_update(yes["callback_data"], message_id))
        assert user_graphs.RAN == [f"run_sql {LONG_QUERY}", "drop_table customers"]
    finally:
        await _close(tg, runner, store)
