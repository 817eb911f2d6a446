"""A group upgraded to a supergroup while a form or a question is open in it, through the real gateway.

Telegram's documented sequence: the old group gets a service message with ``migrate_to_chat_id``,
the supergroup one with ``migrate_from_chat_id``; later messages come from the supergroup, a tap on
a message left in the old group still carries the old chat; every call for the old chat is refused
(400 "group chat was upgraded to a supergroup chat" with ``migrate_to_chat_id``). The supergroup
numbers its own messages, so a message of it may be numbered like one of the old group.
"""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .harness import ALICE, TelegramBench, bot_message, callback_update, message_update
from .test_upgraded_group import MENTION, NEW, OLD_GROUP, SUPERGROUP, upgrade
from .test_wizard import script as form_script


class Form:
    """Alice's taps and typed replies on the form, wherever its message is."""

    def __init__(self, tg: TelegramBench) -> None:
        self.tg = tg
        posted = next(c for c in tg.api.of("sendMessage") if c.markup)
        self.chat, self.message_id = OLD_GROUP, posted.result["message_id"]
        self.token = posted.buttons[0][0]["callback_data"].split("|")[0]

    async def tap(self, action: str, chat: dict[str, Any], message_id: int) -> None:
        await self.tg.deliver(callback_update(f"{self.token}|{action}", message_id, ALICE, chat))

    async def reply(self, text: str, message_id: int) -> None:
        """A reply in the supergroup to its message ``message_id``."""
        quoted = bot_message(message_id, SUPERGROUP)
        await self.tg.deliver(message_update(text, chat=SUPERGROUP, reply_to=quoted))

    def shown(self, chat: dict[str, Any], message_id: int) -> str:
        return self.tg.api.shown(chat["id"], message_id) or ""


async def test_a_form_open_in_the_group_goes_on_in_the_supergroup_by_taps_and_typed_replies(bench):
    runner = ScriptedRunner(form_script)
    tg = await bench(runner)
    await tg.deliver(message_update("@clari_bot deploy", chat=OLD_GROUP, entities=MENTION))
    form = Form(tg)
    old_id = form.message_id
    await form.tap("form", OLD_GROUP, old_id)
    await form.tap("s2", OLD_GROUP, old_id)  # Vue
    assert "2/6 · Features" in form.shown(OLD_GROUP, old_id)
    await upgrade(tg)

    # a tap on the form left in the old group: the form goes on in a message of the supergroup
    await form.tap("t1", OLD_GROUP, old_id)
    moved = tg.api.of("sendMessage")[-1]
    assert moved.params["chat_id"] == NEW
    new_id = moved.result["message_id"]
    assert "2/6 · Features" in form.shown(SUPERGROUP, new_id)
    assert "✓ Auth" in [b["text"] for row in moved.buttons for b in row]
    assert "2/6 · Features" in form.shown(OLD_GROUP, old_id)  # the old group's message stays as it was

    await form.tap("d", SUPERGROUP, new_id)
    await form.tap("y", SUPERGROUP, new_id)
    assert "4/6 · Replicas" in form.shown(SUPERGROUP, new_id)
    await form.reply("3", new_id)  # typed replies to the form in the supergroup fill its steps
    await form.reply("2026-12-01", new_id)
    await form.reply("ship it on Monday", new_id)
    assert "Please check your answers:" in form.shown(SUPERGROUP, new_id)
    await form.tap("S", SUPERGROUP, new_id)

    first, answered = runner.calls
    assert answered.response is not None and answered.response.values == {
        "framework": "Vue",
        "features": ["Auth"],
        "init_git": True,
        "replicas": 3,
        "deadline": "2026-12-01",
        "notes": "ship it on Monday",
    }
    assert answered.thread_id == first.thread_id  # the conversation's agent thread goes on
    assert "✅ Answered by Alice" in form.shown(SUPERGROUP, new_id)
    reply = tg.api.of("sendMessage")[-1]
    assert reply.params["chat_id"] == NEW and reply.params["text"].startswith("Configured:")
    assert [c.params["chat_id"] for c in tg.api.of("sendMessage")].count(NEW) == 2  # moved once


async def test_fill_in_tapped_after_the_upgrade_opens_the_form_in_the_supergroup(bench):
    runner = ScriptedRunner(form_script)
    tg = await bench(runner)
    await tg.deliver(message_update("@clari_bot deploy", chat=OLD_GROUP, entities=MENTION))
    form = Form(tg)
    await upgrade(tg)

    await form.tap("form", OLD_GROUP, form.message_id)
    moved = tg.api.of("sendMessage")[-1]
    assert moved.params["chat_id"] == NEW and "1/6 · Framework" in moved.params["text"]
    await form.reply("React", moved.result["message_id"])  # a choice step takes a typed label too
    assert "2/6 · Features" in form.shown(SUPERGROUP, moved.result["message_id"])


def two_questions(turn: Turn) -> TurnOutput:
    """Each request asks a question of its own; an answer is echoed."""
    if turn.response is None:
        return asking(choice_request(f"Which framework for {turn.text}?", ["React", "Vue"]))
    return TurnOutput(replies=[f"Going with {turn.response.value}."])


async def test_a_reply_in_the_supergroup_stays_in_its_conversation_whenever_the_move_was_heard_of(bench):
    runner = ScriptedRunner(two_questions)
    tg = await bench(runner)
    await tg.deliver(message_update("@clari_bot web", chat=OLD_GROUP, entities=MENTION))
    asked_in_group = tg.api.of("sendMessage")[-1]
    number = asked_in_group.result["message_id"]
    # upgraded; the supergroup's first request is handled before its service messages (webhook
    # deliveries run side by side), and the bot's question there is numbered like the group's
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
    tg.api.numbered_from(SUPERGROUP["id"], number)
    await tg.deliver(message_update("@clari_bot mobile", chat=SUPERGROUP, entities=MENTION))
    asked_in_supergroup = tg.api.of("sendMessage")[-1]
    assert (asked_in_supergroup.params["chat_id"], asked_in_supergroup.result["message_id"]) == (NEW, number)
    await upgrade(tg)

    # Alice answers the supergroup's question by a reply to it
    await tg.deliver(message_update("2", chat=SUPERGROUP, reply_to=bot_message(number, SUPERGROUP)))

    web, mobile, answered = runner.calls
    assert answered.response is not None and answered.response.value == "Vue"
    assert answered.thread_id == mobile.thread_id != web.thread_id
    group_question = await tg.gateway.pending_by_token(token_of(asked_in_group))
    assert group_question is not None and group_question.status == "pending"  # not answered by it
    assert tg.api.of("sendMessage")[-1].params["text"] == "Going with Vue."


def token_of(asked: Any) -> str:
    return str(asked.buttons[0][0]["callback_data"].split("|")[0])


async def test_the_moves_a_process_remembers_are_bounded_and_read_again_from_the_store(monkeypatch):
    from clarigate.adapters.telegram import migration
    from clarigate.gateway.store.memory import MemoryStore

    monkeypatch.setattr(migration, "MAX_REMEMBERED", 4, raising=False)
    moves = migration.ChatMoves(MemoryStore())
    for n in range(1, 21):  # twenty groups upgraded: one process sees every move
        await moves.moved(f"-{n}", f"-100{n}")
    assert len(moves._target) <= 4 and len(moves._identity) <= 4
    assert [await moves.target(f"-{n}") for n in (1, 20)] == ["-1001", "-10020"]
    assert [await moves.identity(f"-100{n}") for n in (1, 20)] == ["-1", "-20"]
