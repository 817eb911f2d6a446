"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Telegram: no "✖ Cancel" on its Edit form nor in the form's steps, a forged Cancel tap changes
nothing, and in a group someone else's message is told, in a note only they see, that only the
asker can answer it while the approval stays theirs. Real python-telegram-bot against the fake
Bot API, the real LangGraph agent (scripted model), the store on the real Redis."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent
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
async def held(bot_api: Any, tmp_path: Any, redis_prefix: str) -> Any:
    """The bench: approvals of ``delete_records`` that allow approve and edit only."""
    runner = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}")
    store = redis_store(redis_prefix)
    tg = await open_bench(bot_api, store, runner)
    yield tg
    await tg.close()
    await runner.aclose()
    await store.close()


def _question(bot_api: Any, text: str) -> tuple[int, list[dict[str, Any]]]:
    """The message id and buttons of the last message with a keyboard that says ``text``."""
    sent = bot_api.of("sendMessage")
    index = max(i for i, c in enumerate(sent) if c.markup and text in c.params["text"])
    return int(sent[index].result["message_id"]), [b for row in sent[index].buttons for b in row]


def _labels(buttons: list[dict[str, Any]]) -> list[str]:
    return [b["text"] for b in buttons]


async def test_no_cancel_on_its_form_and_a_forged_one_changes_nothing(held: Any, bot_api: Any) -> None:
    await held.deliver(message_update("clean up the users table"))
    message_id, buttons = _question(bot_api, "delete_records")
    assert _labels(buttons) == ["⚠️ Approve", "Edit"]
    token = buttons[0]["callback_data"].split("|")[0]

    edits = len(bot_api.of("editMessageText"))
    await held.deliver(callback_update(f"{token}|x", message_id))  # a Cancel nothing shows
    alert = bot_api.of("answerCallbackQuery")[-1].params
    assert alert["text"] == catalog.text("approval_answer_first", new="/new") and alert["show_alert"]
    assert len(bot_api.of("editMessageText")) == edits and user_graphs.RAN == []

    await held.deliver(callback_update(buttons[1]["callback_data"], message_id))  # Edit
    form_id, form_buttons = _question(bot_api, "Edit the arguments")
    assert _labels(form_buttons) == ["📝 Fill in"]  # its Edit form cannot be turned down either
    form_token = form_buttons[0]["callback_data"].split("|")[0]
    await held.deliver(callback_update(f"{form_token}|form", form_id))
    steps = [_labels(b for row in bot_api.of("editMessageText")[-1].buttons for b in row)]
    while not any("Submit" in label for label in steps[-1]):
        await held.deliver(callback_update(f"{form_token}|K", form_id))  # Keep the current value
        steps.append(_labels(b for row in bot_api.of("editMessageText")[-1].buttons for b in row))
    assert len(steps) == 3 and not [label for labels in steps for label in labels if "Cancel" in label]
    await held.deliver(callback_update(f"{form_token}|S", form_id))
    assert user_graphs.RAN == ["delete users 5"]


async def test_in_a_group_someone_elses_message_leaves_it_to_its_asker(held: Any, bot_api: Any) -> None:
    bot_api.ephemeral = True  # a Bot API 10.2 server: a note only one member sees
    await held.deliver(mention_update("clean up the users table", ALICE, GROUP))
    question_id, buttons = _question(bot_api, "delete_records")
    to_it = bot_message(question_id, GROUP)
    await held.deliver(message_update("what is on today", BOB, GROUP, reply_to=to_it))
    await held.deliver(message_update("/cancel", BOB, GROUP, reply_to=to_it))

    only_alice = catalog.text("approval_only_asker", who="Alice", new="/new")
    notes = [c.params for c in bot_api.of("sendMessage") if c.params.get("receiver_user_id")]
    assert [(n["receiver_user_id"], n["text"]) for n in notes] == [(str(BOB["id"]), only_alice)] * 2
    assert only_alice not in bot_api.visible_to(GROUP["id"], ALICE["id"])
    assert user_graphs.RAN == []

    # the approval is still Alice's: her go-ahead, then its "⚠️ Yes"
    await held.deliver(callback_update(buttons[0]["callback_data"], question_id, ALICE, GROUP))
    yes = bot_api.of("editMessageText")[-1].buttons[0][0]
    await held.deliver(callback_update(yes["callback_data"], question_id, ALICE, GROUP))
    assert user_graphs.RAN == ["delete users 5"]
    # the agent never read Bob's words: the last person's message it saw is Alice's
    assert bot_api.of("sendMessage")[-1].params["text"] == "Finished: clean up the users table"
