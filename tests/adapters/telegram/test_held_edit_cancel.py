"""``/cancel`` in the middle of the Edit form of an approval that cannot be turned down (approve
and edit only), on Telegram: the edit is dropped, never the approval. The person is told so, the
form's message offers the decision again ("⚠️ Approve" as it is, "Edit" from the current values),
nothing is answered and nothing runs until they decide. Real python-telegram-bot against the fake
Bot API, the real LangGraph agent (scripted model) with a tool recording its exact arguments, the
store on the real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale
from clarigate.agent.settings import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import approval_tools as tools

from .conftest import redis_store
from .harness import (
    ALICE,
    BOB,
    GROUP,
    bot_message,
    callback_update,
    command_update,
    mention_update,
    message_update,
    open_bench,
)

CHAT = ALICE["id"]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    tools.CALLS.clear()


@pytest.fixture
async def held(request: pytest.FixtureRequest, bot_api: Any, tmp_path: Path, redis_prefix: str) -> Any:
    """The bench: ``delete_records(**tools.ARGS)`` needs an approval that allows approve and edit
    only; the agent then says what the person said last (the gateway's settings: the test's
    indirect parameter, if any)."""
    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump([tools.DELETE_TURN, {"content": "Finished: {last_user}"}], sort_keys=False)
    )
    settings = AgentSettings(
        model=f"scripted:{script}",
        checkpointer_url="memory://",
        tools=(tools.TOOL,),
        require_approval={"delete_records": ["approve", "edit"]},
    )
    runner = LangGraphRunner(settings)
    store = redis_store(redis_prefix)
    tg = await open_bench(bot_api, store, runner, **getattr(request, "param", {}))
    yield tg
    await tg.close()
    await runner.aclose()
    await store.close()


def _shown(bot_api: Any, message_id: int, chat: int = CHAT) -> tuple[str, list[str]]:
    """What message ``message_id`` of ``chat`` (Alice's private chat) shows now: its text and
    button labels."""
    text, markup = bot_api.messages[(chat, message_id)]
    rows = json.loads(markup)["inline_keyboard"] if markup else []
    return text, [b["text"] for row in rows for b in row]


def _tap(
    bot_api: Any,
    message_id: int,
    label: str,
    user: dict[str, Any] = ALICE,
    chat: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``user``'s tap on the button of message ``message_id`` (of ``chat``, else Alice's private
    chat) that says ``label``."""
    _, markup = bot_api.messages[(chat["id"] if chat else CHAT, message_id)]
    found = [b for row in json.loads(markup)["inline_keyboard"] for b in row if label in b["text"]]
    assert found, f"no {label!r} button on message {message_id}"
    return callback_update(found[0]["callback_data"], message_id, user, chat)


def _asked(bot_api: Any, text: str) -> int:
    """The id of the last message posted with a keyboard that says ``text``."""
    sent = [c for c in bot_api.of("sendMessage") if c.markup and text in c.params["text"]]
    return int(sent[-1].result["message_id"])


async def _edit_dropped(tg: Any, bot_api: Any, request: str, locale: Locale) -> int:
    """Ask, tap Edit, Fill in, type a new table name, then ``/cancel`` (delivered twice, as a
    webhook retry would: answered once): the form's message id."""
    await tg.deliver(message_update(request))
    approval = _asked(bot_api, "delete_records")
    await tg.deliver(_tap(bot_api, approval, catalog.text("edit", locale)))
    form = _asked(bot_api, catalog.text("approval_edit_question", locale, name="delete_records"))
    await tg.deliver(_tap(bot_api, form, catalog.text("fill_in", locale)))
    await tg.deliver(message_update("orders"))  # the table: now on the next step
    assert "→ orders" not in _shown(bot_api, form)[0] and "dry_run" in _shown(bot_api, form)[0]
    cancel = command_update("/cancel")
    await tg.deliver(cancel)
    said = len(bot_api.of("sendMessage"))
    await tg.deliver(cancel)
    assert len(bot_api.of("sendMessage")) == said
    return form


@pytest.mark.parametrize(
    ("request_text", "locale"), [("clean up the test data", "en"), ("清理测试数据", "zh")]
)
async def test_cancel_drops_the_edit_and_the_approval_waits(
    held: Any, bot_api: Any, request_text: str, locale: Locale
) -> None:
    messages, answers = held.record()
    form = await _edit_dropped(held, bot_api, request_text, locale)

    approve, edit = f"⚠️ {catalog.text('approve', locale)}", catalog.text("edit", locale)
    said = catalog.text("held_edit_dropped", locale, approve=approve, edit=edit, new="/new")
    assert bot_api.of("sendMessage")[-1].params["text"] == said
    text, labels = _shown(bot_api, form)
    assert labels == [approve, edit] and "delete_records" in text and "✅" not in text
    # the only answer is the approval's Edit: the form was neither submitted nor turned down
    assert [(bool(a.option_id), a.values, a.decline) for a in answers] == [(True, None, False)]
    assert tools.CALLS == []
    assert [m.text for m in messages] == [request_text]  # the core never saw the /cancel

    # "⚠️ Approve" asks again before it counts; "◀ Go back" shows the decision again
    await held.deliver(_tap(bot_api, form, approve))
    yes = "⚠️ " + catalog.text("confirm_yes", locale, option=catalog.text("approve", locale))
    assert _shown(bot_api, form)[1] == [yes, f"◀ {catalog.text('confirm_deny', locale)}"]
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == catalog.text(
        "confirm_tap", locale, yes=yes
    )
    await held.deliver(_tap(bot_api, form, catalog.text("confirm_deny", locale)))
    assert _shown(bot_api, form)[1] == [approve, edit] and tools.CALLS == []

    await held.deliver(_tap(bot_api, form, approve))
    await held.deliver(_tap(bot_api, form, yes))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]  # approved as it was
    assert _shown(bot_api, form)[1] == [] and "✅" in _shown(bot_api, form)[0]
    # the agent never read the /cancel: the last thing the person said is their request
    assert bot_api.of("sendMessage")[-1].params["text"] == f"Finished: {request_text}"


async def test_after_a_dropped_edit_edit_starts_again_from_the_current_values(
    held: Any, bot_api: Any
) -> None:
    form = await _edit_dropped(held, bot_api, "clean up the test data", "en")

    await held.deliver(_tap(bot_api, form, "Edit"))
    text = _shown(bot_api, form)[0]
    assert "1/5 · table" in text and "→ test_data" in text and "orders" not in text  # entries dropped
    await held.deliver(message_update("orders"))
    while not any("Submit" in label for label in _shown(bot_api, form)[1]):
        await held.deliver(_tap(bot_api, form, "Keep"))
    await held.deliver(_tap(bot_api, form, "Submit"))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "table": "orders"})]


async def test_a_second_cancel_once_the_edit_is_dropped_changes_nothing(held: Any, bot_api: Any) -> None:
    form = await _edit_dropped(held, bot_api, "clean up the test data", "en")
    shown = _shown(bot_api, form)
    await held.deliver(command_update("/cancel"))
    # the core's own answer for an approval held open: it stays as it is
    assert bot_api.of("sendMessage")[-1].params["text"] == catalog.text("approval_answer_first", new="/new")
    assert _shown(bot_api, form) == shown and tools.CALLS == []


async def test_in_a_group_only_its_asker_decides_once_her_edit_is_dropped(held: Any, bot_api: Any) -> None:
    await held.deliver(mention_update("clean up the test data", ALICE, GROUP))
    approval = _asked(bot_api, "delete_records")
    await held.deliver(_tap(bot_api, approval, "Edit", ALICE, GROUP))
    form = _asked(bot_api, "Edit the arguments")
    await held.deliver(_tap(bot_api, form, "Fill in", ALICE, GROUP))
    await held.deliver(message_update("orders", ALICE, GROUP, reply_to=bot_message(form, GROUP)))
    await held.deliver(command_update("/cancel", ALICE, chat=GROUP, reply_to=bot_message(form, GROUP)))
    decision = _shown(bot_api, form, GROUP["id"])
    assert decision[1] == ["⚠️ Approve", "Edit"]

    # Bob can neither turn it nor approve it (not even with a forged "⚠️ Yes: Approve")
    refused = catalog.text("not_allowed", who="Alice")
    await held.deliver(_tap(bot_api, form, "Approve", BOB, GROUP))
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == refused
    token = json.loads(bot_api.messages[(GROUP["id"], form)][1])["inline_keyboard"][0][0]["callback_data"]
    await held.deliver(callback_update(token.replace("|A", "|AY"), form, BOB, GROUP))
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == refused
    assert _shown(bot_api, form, GROUP["id"]) == decision and tools.CALLS == []

    await held.deliver(_tap(bot_api, form, "Approve", ALICE, GROUP))
    await held.deliver(_tap(bot_api, form, "Yes: Approve", ALICE, GROUP))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]


@pytest.mark.parametrize("held", [{"answer_policy": "anyone"}], indirect=True)
async def test_where_anyone_may_answer_her_approve_is_confirmed_by_her_alone(held: Any, bot_api: Any) -> None:
    """Anyone in the group may answer, yet nobody approves in one tap: Bob's tap on the
    "⚠️ Yes: Approve" that Alice's "⚠️ Approve" drew answers nothing; one forged without her (as
    drawn before buttons said whose) only asks again, for him."""
    await held.deliver(mention_update("clean up the test data", ALICE, GROUP))
    await held.deliver(_tap(bot_api, _asked(bot_api, "delete_records"), "Edit", ALICE, GROUP))
    form = _asked(bot_api, "Edit the arguments")
    await held.deliver(_tap(bot_api, form, "Fill in", ALICE, GROUP))
    await held.deliver(command_update("/cancel", ALICE, chat=GROUP, reply_to=bot_message(form, GROUP)))
    assert _shown(bot_api, form, GROUP["id"])[1] == ["⚠️ Approve", "Edit"]

    await held.deliver(_tap(bot_api, form, "Approve", ALICE, GROUP))  # Alice's first step
    asking = _shown(bot_api, form, GROUP["id"])
    assert asking[1] == ["⚠️ Yes: Approve", "◀ Go back"]
    mine = catalog.text("confirm_not_yours", option="Approve")
    await held.deliver(_tap(bot_api, form, "Yes: Approve", BOB, GROUP))  # Bob: one tap
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == mine
    assert _shown(bot_api, form, GROUP["id"]) == asking and tools.CALLS == []
    token = json.loads(bot_api.messages[(GROUP["id"], form)][1])["inline_keyboard"][0][0]["callback_data"]
    await held.deliver(callback_update(token.split("|")[0] + "|AY", form, BOB, GROUP))  # drawn for no one
    yes = "⚠️ " + catalog.text("confirm_yes", option=catalog.text("approve"))
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == catalog.text("confirm_tap", yes=yes)
    assert tools.CALLS == []  # the message asks Bob now: Alice's tap on it answers nothing either
    await held.deliver(_tap(bot_api, form, "Yes: Approve", ALICE, GROUP))
    assert bot_api.of("answerCallbackQuery")[-1].params["text"] == mine and tools.CALLS == []

    await held.deliver(_tap(bot_api, form, "Go back", ALICE, GROUP))
    await held.deliver(_tap(bot_api, form, "Approve", ALICE, GROUP))
    await held.deliver(_tap(bot_api, form, "Yes: Approve", ALICE, GROUP))  # her second step
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    assert "✅" in _shown(bot_api, form, GROUP["id"])[0]


async def test_a_yes_approve_drawn_by_the_release_before_asks_again_for_her(held: Any, bot_api: Any) -> None:
    """A "⚠️ Yes: Approve" drawn before buttons said whose it is (``{token}|AY``, no owner), tapped
    after an upgrade by the person who asked: nothing runs, it asks again for her; hers approves once."""
    form = await _edit_dropped(held, bot_api, "clean up the test data", "en")
    shown = json.loads(bot_api.messages[(CHAT, form)][1])["inline_keyboard"]
    token = shown[0][0]["callback_data"].split("|")[0]

    await held.deliver(callback_update(f"{token}|AY", form))  # the old keyboard's "⚠️ Yes: Approve"
    yes = "⚠️ " + catalog.text("confirm_yes", option=catalog.text("approve"))
    answered = bot_api.of("answerCallbackQuery")[-1].params
    assert answered["text"] == catalog.text("confirm_tap", yes=yes) and answered["show_alert"] == "false"
    drawn = bot_api.of("editMessageText")[-1]
    assert [[(b["text"], b["callback_data"]) for b in row] for row in drawn.buttons] == [
        [(yes, f"{token}|AY:{ALICE['id']}")],
        [(f"◀ {catalog.text('confirm_deny')}", f"{token}|AB")],
    ]
    assert tools.CALLS == []

    confirm = callback_update(drawn.buttons[0][0]["callback_data"], form)
    await held.deliver(confirm)
    await held.deliver(confirm)  # delivered again (a webhook retry): approved once
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    assert "✅" in _shown(bot_api, form)[0]


async def test_an_edit_form_asked_again_offers_no_approve_of_the_values_it_shows(
    held: Any, bot_api: Any
) -> None:
    """Asked again after an edit it could not take (JSON that does not parse), the form shows the
    person's values, not the call's: no "⚠️ Approve" could approve the call as it was."""
    await held.deliver(message_update("clean up the test data"))
    await held.deliver(_tap(bot_api, _asked(bot_api, "delete_records"), "Edit"))
    form = _asked(bot_api, "Edit the arguments")
    await held.deliver(_tap(bot_api, form, "Fill in"))
    while not any("Submit" in label for label in _shown(bot_api, form)[1]):
        if "· tags</b>" in _shown(bot_api, form)[0]:
            await held.deliver(message_update('["old", "tmp"'))
        else:
            await held.deliver(_tap(bot_api, form, "Keep"))
    await held.deliver(_tap(bot_api, form, "Submit"))
    again = _asked(bot_api, "Edit the arguments")
    assert again != form and tools.CALLS == []

    await held.deliver(_tap(bot_api, again, "Fill in"))
    await held.deliver(command_update("/cancel"))
    assert bot_api.of("sendMessage")[-1].params["text"] == catalog.text("approval_answer_first", new="/new")
    assert _shown(bot_api, again)[1] == ["📝 Fill in"] and tools.CALLS == []


async def test_a_form_tap_sent_before_the_cancel_reopens_nothing(held: Any, bot_api: Any) -> None:
    """A step's tap sent before the ``/cancel`` and delivered after it (a webhook retry, a slow
    network) finds the edit dropped: it is told the form is closed and the message keeps offering
    the decision, as the ``/cancel``'s answer says; the decision's "Edit" still opens the form."""
    await held.deliver(message_update("clean up the test data"))
    await held.deliver(_tap(bot_api, _asked(bot_api, "delete_records"), "Edit"))
    form = _asked(bot_api, "Edit the arguments")
    await held.deliver(_tap(bot_api, form, "Fill in"))
    late_keep = _tap(bot_api, form, "Keep")  # tapped on the first step, delivered after /cancel
    await held.deliver(command_update("/cancel"))
    decision = _shown(bot_api, form)
    assert decision[1] == ["⚠️ Approve", "Edit"]

    await held.deliver(late_keep)
    alert = bot_api.of("answerCallbackQuery")[-1].params
    assert alert.get("text") == catalog.text("form_closed") and alert["show_alert"]
    assert _shown(bot_api, form) == decision and tools.CALLS == []

    await held.deliver(_tap(bot_api, form, "Edit"))
    assert "1/5 · table" in _shown(bot_api, form)[0]
    await held.deliver(_tap(bot_api, form, "Keep"))
    assert "2/5 · dry_run" in _shown(bot_api, form)[0] and tools.CALLS == []


async def _group_edit_dropped(held: Any, bot_api: Any) -> tuple[list[Any], int]:
    """In the group, Alice's approval's Edit form, her ``/cancel`` (a reply to it) dropping her edit:
    what the core received so far (her request), and the form's message id."""
    messages, _ = held.record()
    await held.deliver(mention_update("clean up the test data", ALICE, GROUP))
    await held.deliver(_tap(bot_api, _asked(bot_api, "delete_records"), "Edit", ALICE, GROUP))
    form = _asked(bot_api, "Edit the arguments")
    await held.deliver(_tap(bot_api, form, "Fill in", ALICE, GROUP))
    await held.deliver(command_update("/cancel", ALICE, chat=GROUP, reply_to=bot_message(form, GROUP)))
    assert _shown(bot_api, form, GROUP["id"])[1] == ["⚠️ Approve", "Edit"]
    return messages, form


async def _reply_stays_in_the_chain(held: Any, bot_api: Any, messages: list[Any], note: int) -> None:
    """Bob's reply to the bot's ``note`` (Telegram's ``reply_to_message``) belongs to the chain of
    Alice's request: the approval there is still to be answered, no new conversation starts."""
    asked = len([c for c in bot_api.of("sendMessage") if c.markup])
    await held.deliver(
        message_update("what is still open here?", BOB, GROUP, reply_to=bot_message(note, GROUP))
    )
    request, reply = messages[0], messages[-1]
    assert reply.text == "what is still open here?"
    assert reply.conversation.thread_key == request.conversation.thread_key
    said = bot_api.of("sendMessage")[-1].params["text"]  # told so, as anyone replying there is
    assert said == catalog.text("approval_only_asker", who="Alice", new="/new")
    assert len([c for c in bot_api.of("sendMessage") if c.markup]) == asked and tools.CALLS == []


async def test_a_reply_to_the_dropped_edits_note_stays_in_its_conversation(held: Any, bot_api: Any) -> None:
    messages, _ = await _group_edit_dropped(held, bot_api)
    note = bot_api.of("sendMessage")[-1]
    assert note.params["text"] == catalog.text(
        "held_edit_dropped", approve="⚠️ Approve", edit="Edit", new="/new"
    )
    await _reply_stays_in_the_chain(held, bot_api, messages, int(note.result["message_id"]))


async def test_a_reply_to_the_form_closed_note_stays_in_its_conversation(held: Any, bot_api: Any) -> None:
    messages, form = await _group_edit_dropped(held, bot_api)
    await held.deliver(message_update("orders", ALICE, GROUP, reply_to=bot_message(form, GROUP)))
    note = bot_api.of("sendMessage")[-1]
    assert note.params["text"].startswith(catalog.text("form_closed"))
    await _reply_stays_in_the_chain(held, bot_api, messages, int(note.result["message_id"]))
