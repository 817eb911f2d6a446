"""Live updates within Telegram's limits: a group's pace shared by its runs, flood waits waited
out, no call that changes nothing, and a chat that removed the bot sent nothing more."""

from __future__ import annotations

import asyncio

from clarigate.adapters.telegram import live
from clarigate.adapters.telegram.markup import markdown_to_html
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.flow.test_streaming import StreamingRunner, words

from .harness import mention_update, message_update
from .test_live import GROUP_ID, sentence, texts


async def test_a_group_that_kicks_the_bot_mid_run_gets_no_reply_posted_again(bench, quick_groups):
    answer = "An answer that takes a while to write out, word after word, slowly."
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])))
    assert (await tg.post(mention_update("go"))).status_code == 200
    for _ in range(200):  # the live message is posted, then the bot is removed from the group
        if tg.api.of("sendMessage"):
            break
        await asyncio.sleep(0.05)
    tg.api.block(GROUP_ID, "Forbidden: bot was kicked from the supergroup chat")
    await tg.gateway.drain(timeout=30)
    assert len(tg.api.of("sendMessage")) == 1 and not tg.api.of("deleteMessage")
    assert len(tg.api.of("editMessageText")) <= 2  # a refused update, the refused finish: no more


async def test_a_flood_wait_on_an_update_stops_the_updates_and_the_reply_waits_it_out(bench, quick_groups):
    # Telegram answers a live update 429 with retry_after 2: no call to the chat inside those 2 s
    answer = "An answer that takes a while to write out, word after word."
    tg = await bench(StreamingRunner(words(answer, 0.1), TurnOutput(replies=[answer])))
    tg.api.fail_next("editMessageText", 429, retry_after=2)
    await tg.deliver(mention_update("go"))
    [live_message] = tg.api.of("sendMessage")
    flooded, finish = tg.api.of("editMessageText")  # the update met the flood wait; the finish after it
    assert finish.at - flooded.at >= 2 * 0.95
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) == answer


async def test_a_finished_message_that_shows_the_answer_already_is_not_edited_again(bench, quick_groups):
    answer = "An answer written out word after word."
    tg = await bench(StreamingRunner([*words(answer, 0.1), 1.5], TurnOutput(replies=[answer])))
    await tg.deliver(mention_update("go"))
    [live_message] = tg.api.of("sendMessage")
    edits = texts(tg.api.of("editMessageText"))
    assert edits[-1] == markdown_to_html(answer)  # the last update showed it all, while the run went on
    assert len(edits) == len(set(edits))  # and the finish sent no copy of it (Telegram: 400 "not modified")
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) == markdown_to_html(answer)


async def test_after_a_draft_meets_a_flood_wait_typing_shows_until_the_reply(bench):
    answer = "An answer that takes a while to write out, word after word, slowly."
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])))
    tg.api.fail_next("sendMessageDraft", 429, retry_after=2)
    await tg.deliver(message_update("go"))
    [flooded] = tg.api.of("sendMessageDraft")  # the core stops updating the run's draft
    [reply] = tg.api.of("sendMessage")
    assert [c for c in tg.api.of("sendChatAction") if flooded.at < c.at < reply.at]
    assert reply.at - flooded.at >= 2 * 0.95 and reply.params["text"] == answer


async def test_several_runs_in_one_group_share_its_twenty_messages_a_minute(bench, quick_groups):
    # two replicas on one store, a run on each (or both on one), streaming into one group at once
    answer = sentence(40)
    store = MemoryStore("pace")
    try:
        replicas = [
            await bench(StreamingRunner(words(answer, 0.1), TurnOutput(replies=[answer])), store=store)
        ]
        replicas.append(
            await bench(StreamingRunner(words(answer, 0.1), TurnOutput(replies=[answer])), store=store)
        )
        for tg, asked in zip(replicas, ("write it out", "and again"), strict=True):
            assert (await tg.post(mention_update(asked))).status_code == 200
        for tg in replicas:
            await tg.gateway.drain(timeout=30)
        api = replicas[0].api
        calls = [c for c in api.calls if c.method in ("sendMessage", "editMessageText")]
        finishes = {c.params.get("message_id"): c for c in calls if c.method == "editMessageText"}
        updates = [c for c in calls if c not in finishes.values()]  # each message's last edit finishes it
        assert len(api.of("sendMessage")) == 2  # one live message per run, each the run's reply
        took = updates[-1].at - updates[0].at
        assert len(updates) >= 4 and len(updates) <= took / live.GROUP_EDIT_INTERVAL + 2
        for message in api.of("sendMessage"):
            assert api.shown(GROUP_ID, message.result["message_id"]) == answer
    finally:
        await store.close()
