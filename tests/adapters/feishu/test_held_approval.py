"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Feishu: no Cancel is offered on its card nor on its Edit form, a forged Cancel changes nothing,
and in a group thread someone else's message is told, in a reply mentioning them alone, that only
the asker can answer it while the approval stays theirs. Real lark-oapi against the fake open
API, the real LangGraph agent (scripted model), both stores."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent
from tests.agent import user_graphs

from .cards import button, components, is_interactive, payload, text_of
from .events import card_action, message_event

GROUP = {"chat": "oc_group", "chat_type": "group"}


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Any) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}")
    yield made
    await made.aclose()


def _labels(card: dict[str, Any]) -> list[str]:
    return [b["text"]["content"] for b in components(card, "button")]


async def _asked(bot: Any, **event: Any) -> tuple[str, dict[str, Any]]:
    await bot.deliver(message_event("clean up the users table", **event))
    await bot.gateway.drain()
    return list(bot.api.cards.items())[-1]


async def test_no_cancel_is_offered_and_a_forged_one_changes_nothing(make_bot: Any, runner: Any) -> None:
    bot = await make_bot(runner)
    message_id, card = await _asked(bot)
    assert _labels(card) == ["Approve", "Edit"]

    forged = {**payload(button(card, "Approve")), "a": "x"}  # a Cancel the card does not show
    refused = await bot.click(card_action(forged, message_id=message_id))
    await bot.gateway.drain()
    assert refused["toast"]["content"] == catalog.text("approval_answer_first", new="/new")
    assert "card" not in refused and bot.api.cards[message_id] == card and user_graphs.RAN == []

    await bot.click(card_action(payload(button(card, "Edit")), message_id=message_id))
    await bot.gateway.drain()
    form = list(bot.api.cards.values())[-1]
    assert "Edit the arguments of delete_records" in text_of(form)
    assert _labels(form) == ["Submit"]  # its Edit form cannot be turned down either
    assert user_graphs.RAN == []


async def test_in_a_group_thread_someone_elses_message_leaves_it_to_its_asker(
    make_bot: Any, runner: Any
) -> None:
    bot = await make_bot(runner)
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    question_id, card = await _asked(bot, user="ou_bob", message_id="om_root", mention_bot=True, **GROUP)
    posted = len(bot.api.posted())

    for text in ("summarize the logs", "/cancel"):
        thread = {"root_id": "om_root", "mention_bot": True, **GROUP}
        await bot.deliver(message_event(text, user="ou_alice", **thread))
        await bot.gateway.drain()
    only_bob = catalog.text("approval_only_asker", who="Bob Li", new="/new")
    notes = bot.api.posted()[posted:]
    assert [text_of(n.card()) for n in notes] == [f"<at id=ou_alice></at> {only_bob}"] * 2
    assert {n.path for n in notes} == {"/open-apis/im/v1/messages/om_root/reply"}
    assert is_interactive(bot.api.cards[question_id]) and user_graphs.RAN == []

    approve = payload(button(card, "Approve"))  # the approval is still Bob's
    await bot.click(card_action(approve, user="ou_bob", chat="oc_group", message_id=question_id))
    await bot.gateway.drain()
    assert user_graphs.RAN == ["delete users 5"]
    # the agent never read Alice's words: the last person's message it saw is Bob's
    assert text_of(bot.api.shown()[-1]) == "Finished: clean up the users table"
