"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Feishu is turned down like any other: its card and its Edit form show a Cancel, which closes it
with the tool not run and the agent told so; in a group thread someone else's message is not held
behind it: it closes the approval as superseded and runs. Real lark-oapi against the fake open
API, the real LangGraph agent (scripted model), both stores."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent, tool_results
from tests.agent import user_graphs

from .cards import button, components, is_interactive, payload, text_of
from .events import card_action, message_event

GROUP = {"chat": "oc_group", "chat_type": "group"}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Any) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}", closings=3)
    yield made
    await made.aclose()


def _labels(card: dict[str, Any]) -> list[str]:
    return [b["text"]["content"] for b in components(card, "button")]


async def _asked(bot: Any, **event: Any) -> tuple[str, dict[str, Any]]:
    await bot.deliver(message_event("clean up the users table", **event))
    await bot.gateway.drain()
    return list(bot.api.cards.items())[-1]


async def test_its_cancel_turns_the_call_down_and_the_agent_goes_on(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    assert _labels(card) == ["Approve", "Edit", "Cancel"]

    reply = await bot.click(card_action(payload(button(card, "Cancel")), message_id=message_id))
    await bot.gateway.drain()
    assert "✖ Cancelled by" in text_of(reply["card"]["data"])
    assert user_graphs.RAN == []  # the tool never ran
    assert await tool_results(runner) == [catalog.text("approval_declined")]  # what the model read
    assert text_of(bot.api.shown()[-1]) == "Finished: clean up the users table"


async def test_its_edit_form_has_a_cancel_too(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    await bot.click(card_action(payload(button(card, "Edit")), message_id=message_id))
    await bot.gateway.drain()
    form_id, form = list(bot.api.cards.items())[-1]
    assert "Edit the arguments of delete_records" in text_of(form)
    assert _labels(form) == ["Submit", "Cancel"]

    await bot.click(card_action(payload(button(form, "Cancel")), message_id=form_id))
    await bot.gateway.drain()
    assert user_graphs.RAN == [] and await tool_results(runner) == [catalog.text("approval_declined")]
    assert text_of(bot.api.shown()[-1]) == "Finished: clean up the users table"


async def test_in_a_group_thread_someone_elses_message_runs_over_it(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    question_id, _ = await _asked(bot, user="ou_bob", message_id="om_root", mention_bot=True, **GROUP)
    thread = {"root_id": "om_root", "mention_bot": True, **GROUP}
    posted = len(bot.api.posted())

    await bot.deliver(message_event("/cancel", user="ou_alice", **thread))  # not Alice's question
    await bot.gateway.drain()
    refused = catalog.text("cancel_not_yours", who="Bob Li")
    assert bot.api.posted()[posted:] == []  # told to Alice alone, in a card only she sees
    assert [(n.open_id, text_of(n.card)) for n in bot.api.ephemeral.values()] == [("ou_alice", refused)]
    assert is_interactive(bot.api.cards[question_id])  # still open for Bob

    await bot.deliver(message_event("summarize the logs", user="ou_alice", **thread))
    await bot.gateway.drain()
    closed = bot.api.cards[question_id]
    assert not is_interactive(closed) and "sent a new message instead" in text_of(closed)
    assert user_graphs.RAN == []  # nobody approved it: it never ran
    assert await tool_results(runner) == [catalog.text("approval_superseded")]
    assert text_of(bot.api.shown()[-1]).endswith("summarize the logs")  # Alice's request was answered
