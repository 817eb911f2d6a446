"""A command written after the bot's @mention (``@clari_bot /cancel``, ``@clari_bot /取消``), where the
bot receives plain mentions (privacy mode off, or an admin): the core reads it as the command, so it
acts where ``/cancel@clari_bot`` does: on the sender's reply chain of a plain group, and on their
open form (README, Telegram: Commands)."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .fake_bot_api import BOT_USER
from .harness import ALICE, bot_message, callback_update, command_update, message_update, private_chat
from .test_choices import ask_then_echo
from .test_wizard import script

PLAIN_GROUP = {"id": -4242, "type": "group", "title": "Ops"}
HANDLE = f"@{BOT_USER['username']}"


def mentioned(command: str, user: dict[str, Any] = ALICE, chat: dict[str, Any] = PLAIN_GROUP, **kw: Any):
    """``@clari_bot /cancel`` as Telegram sends it: a ``mention`` entity at its start, and a
    ``bot_command`` entity where the command is ASCII (``/取消`` is not a command to Telegram)."""
    entities = [{"type": "mention", "offset": 0, "length": len(HANDLE)}]
    if command.isascii():
        entities.append({"type": "bot_command", "offset": len(HANDLE) + 1, "length": len(command)})
    return message_update(f"{HANDLE} {command}", user, chat, entities=entities, **kw)


def sent_texts(calls) -> list[str]:
    return [c.params["text"] for c in calls if c.method == "sendMessage"]


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("/cancel", "✖ Cancelled the question “Which framework?”"),
        ("/取消", "✖ 已取消问题「Which framework?」"),
    ],
)
async def test_a_mentioned_top_level_cancel_closes_the_senders_open_question(bench, command, said):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    asked = tg.api.of("sendMessage")[-1]
    tg.new_calls()

    await tg.deliver(mentioned(command))
    texts = sent_texts(tg.new_calls())
    assert texts and texts[0].startswith(said)
    assert not any("no open question" in text or "没有可以取消" in text for text in texts)
    edit = tg.api.of("editMessageText")[-1]  # the question's message says it was cancelled
    assert edit.params["message_id"] == str(asked.result["message_id"])
    assert "Alice" in edit.params["text"]
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"
    assert len({call.thread_id for call in runner.calls}) == 1  # no new conversation


async def test_a_mentioned_top_level_status_tells_of_the_senders_conversation(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    tg.new_calls()
    await tg.deliver(mentioned("/status"))
    (status,) = sent_texts(tg.new_calls())
    assert "Which framework?" in status


@pytest.mark.parametrize("chat", [PLAIN_GROUP, private_chat(ALICE)], ids=["group", "private"])
async def test_a_typed_cancel_closes_the_senders_open_form(bench, chat):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=chat))
    fill_in = next(c for c in tg.api.of("sendMessage") if c.markup)
    token, form_id = fill_in.buttons[0][0]["callback_data"].split("|")[0], fill_in.result["message_id"]
    await tg.deliver(callback_update(f"{token}|form", form_id, chat=chat))
    assert "1/6 · Framework" in tg.api.of("editMessageText")[-1].params["text"]
    tg.new_calls()

    # a reply to the form: /取消 (no command to Telegram) is for the gateway, never a field value
    form = bot_message(form_id, chat)
    private = chat["type"] == "private"
    cancel = message_update("/取消", reply_to=form) if private else mentioned("/取消", reply_to=form)
    await tg.deliver(cancel)
    texts = sent_texts(tg.new_calls())
    assert texts and texts[0].startswith("✖ 已取消问题")
    assert "⚠️" not in tg.api.of("editMessageText")[-1].params["text"]  # not taken as the step's value
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"
