"""People are shown by name when the app may read names, by open_id otherwise, and never wait for it."""

from __future__ import annotations

import asyncio
import threading

from clarigate.adapters.feishu.names import NameBook
from clarigate.adapters.testing import ScriptedRunner

from .cards import button, payload, text_of
from .events import card_action, message_event
from .test_scenarios import agent, ask


def contact_calls(bot) -> list:
    return [c for c in bot.api.calls if c.path.startswith("/open-apis/contact/v3/users/")]


async def test_toasts_and_the_answered_card_name_people(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_mallory="王小明")
    message_id, card = await ask(bot)
    vue = payload(button(card, "Vue"))

    stranger = await bot.click(card_action(vue, user="ou_mallory", message_id=message_id))
    assert stranger["toast"]["content"] == "Only Alice Wang can answer this question."
    done = await bot.click(card_action(vue, message_id=message_id))
    assert "✅ Answered by Alice Wang: Vue" in text_of(done["card"]["data"])
    again = await bot.click(card_action(vue, user="ou_mallory", message_id=message_id))
    assert again["toast"]["content"] == "Already answered by Alice Wang."

    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.answered_by.display_name == "Alice Wang"
    assert sorted(c.path.rsplit("/", 1)[-1] for c in contact_calls(bot)) == ["ou_alice", "ou_mallory"]


async def test_without_the_contact_scope_open_ids_stay_and_feishu_is_asked_once(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    stranger = await bot.click(
        card_action(payload(button(card, "Vue")), user="ou_bob", message_id=message_id)
    )
    assert "Only ou_alice can answer" in stranger["toast"]["content"]
    await bot.deliver(message_event("hello again"))
    await bot.gateway.drain()
    assert len(contact_calls(bot)) == 1


async def test_a_person_outside_the_contact_range_is_looked_up_once(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.contact_scope = True
    for text in ("hello", "hello again", "and again"):
        await bot.deliver(message_event(text))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["hello", "hello again", "and again"]
    assert len(contact_calls(bot)) == 1


async def test_a_slow_lookup_never_holds_an_event_and_is_tried_again_later():
    calls: list[str] = []

    async def slow(open_id: str) -> str | None:
        calls.append(open_id)
        await asyncio.sleep(5)
        return "never seen"

    book = NameBook(slow, timeout_seconds=0.05, miss_ttl_seconds=0.0)
    assert await book.name("ou_x") is None and await book.name("ou_x") is None
    assert calls == ["ou_x", "ou_x"]  # a miss is not remembered for the whole hour


async def test_names_are_remembered_and_the_book_stays_bounded():
    calls: list[str] = []

    async def lookup(open_id: str) -> str | None:
        calls.append(open_id)
        return open_id.upper()

    book = NameBook(lookup, limit=2)
    for open_id in ("ou_a", "ou_a", "ou_b", "ou_c", "ou_a"):
        assert await book.name(open_id) == open_id.upper()
    assert calls == ["ou_a", "ou_b", "ou_c", "ou_a"]  # ou_a was dropped as the oldest


async def test_an_event_is_acked_without_waiting_for_the_senders_name(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang")
    bot.api.contact_hold = threading.Event()  # Feishu's contact API is slow today

    response = await bot.deliver(message_event("deploy the app"))
    assert response.status_code == 200 and response.json() == {"msg": "success"}  # acked meanwhile
    bot.api.contact_hold.set()
    await bot.gateway.drain()

    message_id, card = list(bot.api.cards.items())[-1]
    vue = payload(button(card, "Vue"))
    stranger = await bot.click(card_action(vue, user="ou_mallory", message_id=message_id))
    assert stranger["toast"]["content"] == "Only Alice Wang can answer this question."  # named where it ran
    assert [c.path.rsplit("/", 1)[-1] for c in contact_calls(bot)].count("ou_alice") == 1
