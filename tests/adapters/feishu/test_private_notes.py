"""A note meant for one member of a group ("Only Bob Li can cancel this question") is a card only
they see (Feishu's "仅对你可见", ``ephemeral/v1/send``), with nothing posted for the group; where
Feishu will not show one (a topic group, a refusal) it is the thread reply mentioning them alone,
as before: the note is never dropped. A failure for now is tried again by the core."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.feishu import card_updates
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary import retry

from .cards import button, is_interactive, payload, text_of
from .events import card_action, message_event
from .test_scenarios import agent, ask
from .test_slow_click_refusals import slow_click

NOTE = "Only Bob Li can cancel this question; it stays open. Your own requests still go ahead."
SEND = "/open-apis/ephemeral/v1/send"


async def alice_cancels_bobs_question(bot: Any, chat: str = "oc_group") -> tuple[str, int]:
    """Bob asks in ``chat``; Alice writes ``/cancel`` in the question's thread: the question's id and
    how many messages the bot had posted before her ``/cancel``."""
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    group = {"chat": chat, "chat_type": "group", "mention_bot": True}
    question_id, _ = await ask(bot, "deploy it", user="ou_bob", message_id="om_root", **group)
    posted = len(bot.api.posted())
    await bot.deliver(message_event("/cancel", user="ou_alice", root_id="om_root", **group))
    await bot.gateway.drain()
    return question_id, posted


def ephemeral_calls(bot: Any) -> list[Any]:
    return [c for c in bot.api.calls if c.path == SEND]


async def test_a_refusal_in_a_group_is_a_card_only_the_refused_member_sees(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    question_id, posted = await alice_cancels_bobs_question(bot)

    assert bot.api.posted()[posted:] == []  # nothing the group sees
    (call,) = ephemeral_calls(bot)
    assert (call.body["chat_id"], call.body["open_id"], call.body["msg_type"]) == (
        "oc_group",
        "ou_alice",
        "interactive",
    )
    (note,) = bot.api.ephemeral.values()
    assert (note.chat_id, note.open_id, text_of(note.card)) == ("oc_group", "ou_alice", NOTE)
    assert is_interactive(bot.api.cards[question_id])  # Bob's question stays open


async def test_a_private_note_is_markdown_escaped_as_every_card_text(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.names.update(ou_bob="<at id=all></at> **Bob**")  # a name is untrusted text
    await alice_cancels_bobs_question(bot)
    (note,) = bot.api.ephemeral.values()
    content = note.card["body"]["elements"][0]["content"]
    assert "<at" not in content and "**Bob**" not in content  # mentions no one, bolds nothing


async def test_in_a_topic_group_the_note_is_the_thread_reply_mentioning_them(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.chats["oc_topics"] = "topic"  # 话题群: Feishu refuses cards only one member sees
    _, posted = await alice_cancels_bobs_question(bot, chat="oc_topics")

    assert [c.code for c in ephemeral_calls(bot)] == [18053] and bot.api.ephemeral == {}
    (reply,) = bot.api.posted()[posted:]
    assert reply.path == "/open-apis/im/v1/messages/om_root/reply" and reply.body["reply_in_thread"]
    assert text_of(reply.card()) == f"<at id=ou_alice></at> {NOTE}"

    await ask(bot, "deploy it again", user="ou_bob", message_id="om_root2", chat="oc_topics",
              chat_type="group", mention_bot=True)  # fmt: skip
    await bot.deliver(message_event("/cancel", user="ou_alice", root_id="om_root2", chat="oc_topics",
                                    chat_type="group", mention_bot=True))  # fmt: skip
    await bot.gateway.drain()
    assert len(ephemeral_calls(bot)) == 1  # the topic group is not asked again
    assert text_of(bot.api.posted()[-1].card()) == f"<at id=ou_alice></at> {NOTE}"


async def test_a_refused_card_only_they_see_falls_back_to_the_thread_reply(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.fail_next(400, 99991672, path_part="/ephemeral/")  # the bot not allowed (no scope)
    _, posted = await alice_cancels_bobs_question(bot)

    assert bot.api.ephemeral == {}
    (reply,) = bot.api.posted()[posted:]
    assert reply.path == "/open-apis/im/v1/messages/om_root/reply"
    assert text_of(reply.card()) == f"<at id=ou_alice></at> {NOTE}"


async def test_a_card_only_they_see_that_failed_for_now_is_tried_again(make_bot, monkeypatch):
    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "pause", no_wait)
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.fail_next(500, 1, path_part="/ephemeral/")  # then 200
    _, posted = await alice_cancels_bobs_question(bot)

    assert [c.status for c in ephemeral_calls(bot)] == [500, 200]
    assert [n.open_id for n in bot.api.ephemeral.values()] == ["ou_alice"]
    assert bot.api.posted()[posted:] == []


async def test_a_refused_click_delivered_again_in_a_group_is_one_card_only_they_see(make_bot, monkeypatch):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    group = {"chat": "oc_group", "chat_type": "group", "mention_bot": True}
    message_id, card = await ask(bot, "deploy it", user="ou_bob", message_id="om_root", **group)
    vue = card_action(payload(button(card, "Vue")), user="ou_alice", chat="oc_group", message_id=message_id)
    await slow_click(bot, monkeypatch, vue)
    await slow_click(bot, monkeypatch, vue)  # Feishu pushed the callback again: same event id

    assert [(n.chat_id, n.open_id) for n in bot.api.ephemeral.values()] == [("oc_group", "ou_alice")]
