"""A click the core is slow to take is answered "Received: still being handled" (README, Feishu:
Receive modes). When the core then refuses it (a wrong form value, someone else's question), the
toast that would have said why is gone: the refusal is posted to the clicker in the conversation
instead (in a group, in a card only they see), once however often Feishu delivers the click, and the
card is left as it is (a form keeps what was entered, nothing counted)."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.feishu import card_updates
from clarigate.adapters.testing import ScriptedRunner

from .cards import button, is_interactive, payload, text_of
from .events import card_action, message_event
from .test_scenarios import agent, ask
from .test_slow_core import PENDING_EN, card_updates_of, held

GROUP = {"chat": "oc_group", "chat_type": "group"}


def private_notes(bot: Any) -> list[tuple[str, str, str]]:
    """The chat, person and text of every card only one member of a group sees."""
    return [(e.chat_id, e.open_id, text_of(e.card)) for e in bot.api.ephemeral.values()]


def notes_after(bot: Any, since: int) -> list[tuple[str, str]]:
    """The path and text of every card the bot posted (sent or replied) after post ``since``
    (a streaming card, which carries only its entity's id, as "")."""
    posted = [c for c in bot.api.posted()[since:] if c.status == 200]
    return [(c.path, text_of(c.card()) if "body" in c.card() else "") for c in posted]


async def slow_click(bot: Any, monkeypatch: Any, event: dict[str, Any]) -> None:
    """Deliver ``event`` while the core is held: answered "being handled"; then let the core go."""
    gate = held(bot.gateway, "submit_answer", monkeypatch)
    reply = await bot.click(event)
    assert reply == {"toast": {"type": "info", "content": PENDING_EN}}  # "it is in", they read
    gate.set()
    await bot.adapter.receiver.cards.settle()
    await bot.gateway.drain()


async def test_a_slow_form_submit_with_a_wrong_value_is_told_and_the_form_kept(make_bot, monkeypatch):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot, "configure the service")
    since = len(bot.api.posted())

    submit = card_action(payload(button(card, "Submit")), form_value={"f1": "many"}, message_id=message_id)
    await slow_click(bot, monkeypatch, submit)

    [(_, note)] = notes_after(bot, since)
    assert "⚠️" in note and "Replicas" in note and "<at " not in note  # a direct chat: no mention
    assert is_interactive(bot.api.cards[message_id]) and not card_updates_of(bot.api, message_id)
    assert [c.response for c in bot.runner.calls[1:]] == []  # nothing counted


async def test_a_slow_click_on_someone_elses_question_is_told_to_the_clicker_alone(make_bot, monkeypatch):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )
    since = len(bot.api.posted())

    vue = card_action(payload(button(card, "Vue")), user="ou_alice", chat="oc_group", message_id=message_id)
    await slow_click(bot, monkeypatch, vue)

    assert notes_after(bot, since) == []  # nothing the group sees
    [(chat, person, note)] = private_notes(bot)
    assert (chat, person) == ("oc_group", "ou_alice")  # in the question's group, to Alice alone
    assert note.startswith("⚠️") and "Only ou_bob can answer" in note
    assert "<at " not in note  # Bob is named, not called
    assert is_interactive(bot.api.cards[message_id])  # Bob's question is still his
    assert len(bot.runner.calls) == 1


async def test_a_slow_refused_click_on_a_forwarded_copy_is_told_where_it_was_clicked(make_bot, monkeypatch):
    # Carol clicks Bob's question on a copy forwarded to another chat: told there, to her alone,
    # not in Bob's group (where her click was never made)
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )
    since = len(bot.api.posted())

    vue = card_action(payload(button(card, "Vue")), user="ou_carol", chat="oc_other", message_id="om_copy")
    await slow_click(bot, monkeypatch, vue)

    assert notes_after(bot, since) == []
    [(chat, person, note)] = private_notes(bot)
    assert (chat, person) == ("oc_other", "ou_carol")  # the copy's group, to Carol alone
    assert note.startswith("⚠️") and "Only ou_bob can answer" in note
    assert is_interactive(bot.api.cards[message_id]) and len(bot.runner.calls) == 1


async def test_a_slow_refused_click_delivered_again_is_told_once(make_bot, monkeypatch):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot, "configure the service")
    since = len(bot.api.posted())

    submit = card_action(payload(button(card, "Submit")), form_value={"f1": "many"}, message_id=message_id)
    await slow_click(bot, monkeypatch, submit)
    await slow_click(bot, monkeypatch, submit)  # Feishu pushed the callback again: same event id

    keys = {c.body.get("uuid") for c in bot.api.posted()[since:]}
    assert len(keys) == 1 and None not in keys  # one note, by Feishu's uuid


async def test_a_slow_click_that_counts_posts_no_note(make_bot, monkeypatch):
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    since = len(bot.api.posted())

    await slow_click(bot, monkeypatch, card_action(payload(button(card, "Vue")), message_id=message_id))
    assert "Answered by" in card_updates_of(bot.api, message_id)[0]
    assert all("⚠️" not in note for _, note in notes_after(bot, since))  # the reply to "Vue" only


async def test_a_slow_vote_that_cannot_count_is_told_to_the_voter_under_the_answer(make_bot, monkeypatch):
    # no question behind a 👍/👎: the refusal is said where the clicked card is, replying to it
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent), streaming="off")
    await bot.deliver(message_event("hello", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP))
    await bot.gateway.drain(timeout=20)
    answer_id = list(bot.api.cards)[-1]
    since = len(bot.api.posted())

    gate = held(bot.gateway, "submit_feedback", monkeypatch)
    vote = card_action({"t": "gone", "a": "v+", "l": "en"}, chat="oc_group", message_id=answer_id)
    assert await bot.click(vote) == {"toast": {"type": "info", "content": PENDING_EN}}
    gate.set()
    await bot.adapter.receiver.cards.settle()

    assert notes_after(bot, since) == []
    assert private_notes(bot) == [("oc_group", "ou_alice", "⚠️ This answer can no longer be rated.")]


async def test_a_slow_refused_click_on_a_copy_forwarded_to_a_direct_chat_mentions_no_one(
    make_bot, monkeypatch
):
    # Carol forwards Bob's question to her one-to-one chat with the bot and clicks it there: the
    # note is a plain message in that chat (nobody else to call, no thread)
    monkeypatch.setattr(card_updates, "CALLBACK_WAIT_SECONDS", 0.2)
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )
    since = len(bot.api.posted())

    vue = card_action(payload(button(card, "Vue")), user="ou_carol", chat="oc_p2p", message_id="om_copy")
    await slow_click(bot, monkeypatch, vue)

    [note] = [c for c in bot.api.posted()[since:] if c.status == 200]
    assert note.path == "/open-apis/im/v1/messages" and note.body["receive_id"] == "oc_p2p"
    assert not note.body.get("reply_in_thread")
    said = text_of(note.card())
    assert said.startswith("⚠️") and "Only ou_bob can answer" in said and "<at " not in said
    assert is_interactive(bot.api.cards[message_id]) and len(bot.runner.calls) == 1
