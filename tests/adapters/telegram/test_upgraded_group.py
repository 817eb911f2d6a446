"""A group upgraded to a supergroup: new messages go to the supergroup, old ones stay where they are.

The old group's id stays the conversations' identity (``migration``), but message ids are
numbered per chat (a basic group shares the bot's one sequence with its private chats, a
supergroup has its own): the supergroup may well have a message numbered like one the bot posted
in the old group. An edit, a deletion or a quote meant for the old group's message never lands on
that one; the old group's message is left as it is (Telegram refuses every call for the old chat:
400 "group chat was upgraded to a supergroup chat" with ``migrate_to_chat_id``), and nothing
fails for it. Messages posted in the supergroup stay editable.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from telegram.error import BadRequest

from clarigate.adapters.telegram.render import TelegramMessage
from clarigate.adapters.telegram.send import delivery_failure
from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.flow.test_streaming import StreamingRunner, words

from .fake_bot_api import Call
from .harness import ALICE, TelegramBench, callback_update, message_update
from .test_choices import ask_then_echo

OLD_GROUP = {"id": -4455, "type": "group", "title": "Team"}
SUPERGROUP = {"id": -1004455, "type": "supergroup", "title": "Team"}
OLD, NEW = str(OLD_GROUP["id"]), str(SUPERGROUP["id"])
MENTION = [{"type": "mention", "offset": 0, "length": 10}]
UNRELATED = "Release notes for 2.4 are out."


async def upgrade(tg: TelegramBench) -> None:
    """Telegram upgrades the group: calls for the old id fail from now on, and both chats say so."""
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
    await tg.deliver(message_update(None, chat=OLD_GROUP, migrate_to_chat_id=SUPERGROUP["id"]))
    await tg.deliver(message_update(None, chat=SUPERGROUP, migrate_from_chat_id=OLD_GROUP["id"]))


def numbered_like(tg: TelegramBench, message_id: int | str) -> None:
    """The supergroup has a message of its own with this number (it numbers its own messages)."""
    tg.api.messages[(SUPERGROUP["id"], int(message_id))] = (UNRELATED, "")


def calls_on(tg: TelegramBench, chat_id: str, message_id: int | str) -> list[str]:
    """The Bot API methods called for message ``message_id`` of ``chat_id``."""
    return [
        c.method
        for c in tg.api.calls
        if c.params.get("chat_id") == chat_id and c.params.get("message_id") == str(message_id)
    ]


def quoted(call: Call) -> int | None:
    """The message a ``sendMessage`` quotes, if any."""
    raw = call.params.get("reply_parameters")
    return json.loads(raw)["message_id"] if raw else None


async def test_a_tap_on_a_question_left_in_the_old_group_answers_it_and_changes_nothing_else(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    request = message_update("@clari_bot deploy", chat=OLD_GROUP, entities=MENTION)
    await tg.deliver(request)
    asked = tg.api.of("sendMessage")[-1]
    question_id = asked.result["message_id"]
    await upgrade(tg)
    numbered_like(tg, question_id)
    numbered_like(tg, request["message"]["message_id"])

    # Alice taps "Vue" on the question, still shown in the old group's history
    await tg.deliver(callback_update(asked.buttons[0][1]["callback_data"], question_id, ALICE, OLD_GROUP))
    await tg.settle()

    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Vue"
    # "✅ Answered…" was tried once where the question is, refused there, and looked for nowhere else
    assert calls_on(tg, OLD, question_id) == ["editMessageText"]
    assert calls_on(tg, NEW, question_id) == []
    assert tg.api.shown(SUPERGROUP["id"], question_id) == UNRELATED
    reply = tg.api.of("sendMessage")[-1]  # the answer goes on in the supergroup, quoting nothing there
    assert reply.params["chat_id"] == NEW and "Vue" in reply.params["text"] and quoted(reply) is None


async def test_a_question_asked_in_the_supergroup_quotes_its_request_and_shows_its_answer(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await upgrade(tg)
    request = message_update("@clari_bot deploy", chat=SUPERGROUP, entities=MENTION)
    await tg.deliver(request)
    asked = tg.api.of("sendMessage")[-1]
    question_id = asked.result["message_id"]
    assert asked.params["chat_id"] == NEW and quoted(asked) == request["message"]["message_id"]

    await tg.deliver(callback_update(asked.buttons[0][1]["callback_data"], question_id, ALICE, SUPERGROUP))
    await tg.settle()

    assert "Answered by Alice: Vue" in (tg.api.shown(SUPERGROUP["id"], question_id) or "")
    reply = tg.api.of("sendMessage")[-1]
    assert reply.params["chat_id"] == NEW and quoted(reply) == request["message"]["message_id"]


async def test_a_reply_refused_by_the_old_group_goes_to_the_supergroup_without_its_quote(bench):
    tg = await bench()
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])  # not heard of yet: the refusal tells
    numbered_like(tg, 7)
    group = Conversation(platform="telegram", chat_id=OLD, topic="msg-7", reply_to="7", chat_type="group")
    await tg.adapter.send(group, TextReply(text="Done."))
    tried, sent = tg.api.of("sendMessage")
    assert (tried.params["chat_id"], quoted(tried)) == (OLD, 7)  # message 7 of the old group
    assert (sent.params["chat_id"], quoted(sent)) == (NEW, None)  # not the supergroup's message 7


async def test_an_old_group_message_is_refused_for_good_and_never_looked_for_in_the_supergroup(bench):
    tg = await bench()
    group = Conversation(platform="telegram", chat_id=OLD, topic="msg-1", reply_to="1", chat_type="group")
    posted = await tg.adapter.sender.post(group, TelegramMessage("Which region?"))
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
    numbered_like(tg, posted.message_id)
    sender = tg.adapter.sender

    with pytest.raises(BadRequest) as refused:
        await sender.edit(OLD, str(posted.message_id), TelegramMessage("✅ Answered"))
    assert delivery_failure(refused.value, "editMessageText").permanent  # never retried
    assert await sender.delete(OLD, str(posted.message_id)) is False  # as a message gone already
    assert calls_on(tg, OLD, posted.message_id) == ["editMessageText", "deleteMessage"]
    assert calls_on(tg, NEW, posted.message_id) == []
    assert await sender.moves.target(OLD) == NEW  # the move is known from the refusal


class UpgradingRunner(StreamingRunner):
    """A ``StreamingRunner`` whose events may also be functions, awaited in their turn."""

    async def run_turn(self, run: Any) -> TurnOutput:
        for event in self.events:
            if callable(event):
                await event()
            elif isinstance(event, float | int):
                await asyncio.sleep(event)
            elif run.on_event is not None:
                await run.on_event(event)
        return await ScriptedRunner.run_turn(self, run)


async def test_a_live_message_left_in_the_old_group_is_not_finished_in_the_supergroup(bench, quick_groups):
    answer = "The deploy went fine, all checks are green."
    tg: TelegramBench | None = None

    async def upgraded() -> None:  # once the live message is up in the old group
        assert tg is not None
        for _ in range(250):  # 5 s at most
            if tg.api.of("sendMessage"):
                break
            await asyncio.sleep(0.02)
        tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
        numbered_like(tg, tg.api.of("sendMessage")[0].result["message_id"])

    events = [*words("The deploy went fine,", 0.2), upgraded, *words(" all checks are green.", 0.2)]
    tg = await bench(UpgradingRunner(events, TurnOutput(replies=[answer])))
    request = message_update("@clari_bot how did it go?", chat=OLD_GROUP, entities=MENTION)
    await tg.deliver(request)

    live_message, *rest = tg.api.of("sendMessage")
    live_id = live_message.result["message_id"]
    assert live_message.params["chat_id"] == OLD
    assert calls_on(tg, NEW, live_id) == [] and tg.api.shown(SUPERGROUP["id"], live_id) == UNRELATED
    posted = [c for c in rest if c.params["chat_id"] == NEW]
    assert [c.params["text"] for c in posted] == [answer]  # the reply, posted anew in the supergroup
    assert quoted(posted[0]) is None  # the request is the old group's message


async def test_a_live_message_posted_in_the_supergroup_is_finished_there_by_another_replica(bench):
    store = MemoryStore("upgraded-handover")
    try:
        first, second = await bench(store=store), await bench(store=store)
        await upgrade(first)
        group = Conversation(platform="telegram", chat_id=OLD, topic="msg-1", reply_to="1", chat_type="group")
        ref = await first.adapter.show_live(group, LiveView(mode="edit", status="⏳ Working…"), None)
        assert ref is not None and ref.message_id == ""  # "typing…": no message yet
        await first.adapter.show_live(group, LiveView(mode="edit", text="Half an answer", shown=""), ref)
        [live_message] = first.api.of("sendMessage")
        assert live_message.params["chat_id"] == NEW
        await second.adapter.send(group, TextReply(text="Half an answer, then the rest.", live=ref))
        assert first.api.of("sendMessage") == [live_message]  # finished in place, not posted again
        shown = first.api.shown(SUPERGROUP["id"], live_message.result["message_id"])
        assert shown == "Half an answer, then the rest."
    finally:
        await store.close()
