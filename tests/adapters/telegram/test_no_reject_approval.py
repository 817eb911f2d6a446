"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Telegram is turned down like any other: it and its Edit form's steps show "✖ Cancel", which
closes it with the tool not run and the agent told so; in a group someone else's message is not
held behind it: it closes the approval as superseded and runs. Real python-telegram-bot against
the fake Bot API, the real LangGraph agent (scripted model), the store on the real Redis."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent, tool_results
from tests.agent import user_graphs

from .conftest import redis_store
from .harness import (
    ALICE,
    BOB,
    GROUP,
    bot_message,
    callback_update,
    mention_update,
    message_update,
    open_bench,
)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def bench(bot_api: Any, tmp_path: Any, redis_prefix: str) -> Any:
    """The bench: approvals of ``delete_records`` that allow approve and edit only."""
    runner = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}", closings=3)
    store = redis_store(redis_prefix)
    tg = await open_bench(bot_api, store, runner)
    tg.runner = runner
    yield tg
    await tg.close()
    await runner.aclose()
    await store.close()


def _question(bot_api: Any, text: str) -> tuple[int, list[dict[str, Any]]]:
    """The message id and buttons of the last message with a keyboard that says ``text``."""
    sent = bot_api.of("sendMessage")
    index = max(i for i, c in enumerate(sent) if c.markup and text in c.params["text"])
    return int(sent[index].result["message_id"]), [b for row in sent[index].buttons for b in row]


def _labels(buttons: Any) -> list[str]:
    return [b["text"] for b in buttons]


async def test_its_cancel_turns_the_call_down_and_the_agent_goes_on(bench: Any, bot_api: Any) -> None:
    await bench.deliver(message_update("clean up the users table"))
    message_id, buttons = _question(bot_api, "delete_records")
    assert _labels(buttons) == ["⚠️ Approve", "Edit", "✖ Cancel"]

    await bench.deliver(callback_update(buttons[2]["callback_data"], message_id))
    assert "✖ Cancelled by" in bot_api.of("editMessageText")[-1].params["text"]
    assert user_graphs.RAN == []  # the tool never ran
    assert await tool_results(bench.runner) == [catalog.text("approval_declined")]  # what it read
    assert bot_api.of("sendMessage")[-1].params["text"] == "Finished: clean up the users table"


async def test_its_edit_form_has_a_cancel_on_every_step(bench: Any, bot_api: Any) -> None:
    await bench.deliver(message_update("clean up the users table"))
    message_id, buttons = _question(bot_api, "delete_records")
    await bench.deliver(callback_update(buttons[1]["callback_data"], message_id))  # Edit
    form_id, form_buttons = _question(bot_api, "Edit the arguments")
    assert _labels(form_buttons) == ["📝 Fill in", "✖ Cancel"]
    form_token = form_buttons[0]["callback_data"].split("|")[0]
    await bench.deliver(callback_update(f"{form_token}|form", form_id))
    step = [b for row in bot_api.of("editMessageText")[-1].buttons for b in row]
    assert "✖ Cancel" in _labels(step)

    await bench.deliver(callback_update(f"{form_token}|x", form_id))  # its ✖ Cancel
    assert user_graphs.RAN == [] and await tool_results(bench.runner) == [catalog.text("approval_declined")]
    assert bot_api.of("sendMessage")[-1].params["text"] == "Finished: clean up the users table"


async def test_in_a_group_someone_elses_message_runs_over_it(bench: Any, bot_api: Any) -> None:
    bot_api.ephemeral = True  # a Bot API 10.2 server: a note only one member sees
    await bench.deliver(mention_update("clean up the users table", ALICE, GROUP))
    question_id, _ = _question(bot_api, "delete_records")
    to_it = bot_message(question_id, GROUP)

    await bench.deliver(message_update("/cancel", BOB, GROUP, reply_to=to_it))  # not Bob's question
    refused = catalog.text("cancel_not_yours", who="Alice")
    notes = [c.params for c in bot_api.of("sendMessage") if c.params.get("receiver_user_id")]
    assert [(n["receiver_user_id"], n["text"]) for n in notes] == [(str(BOB["id"]), refused)]

    await bench.deliver(message_update("what is on today", BOB, GROUP, reply_to=to_it))
    closed = [
        c.params["text"] for c in bot_api.of("editMessageText") if int(c.params["message_id"]) == question_id
    ]
    assert "sent a new message instead" in closed[-1]
    assert user_graphs.RAN == []  # nobody approved it: it never ran
    assert await tool_results(bench.runner) == [catalog.text("approval_superseded")]
    assert bot_api.of("sendMessage")[-1].params["text"].endswith("what is on today")  # Bob's, answered
    assert len([c for c in bot_api.of("sendMessage") if c.params.get("receiver_user_id")]) == 1
