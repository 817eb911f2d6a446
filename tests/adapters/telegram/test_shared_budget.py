"""Telegram's 20 messages a minute in a group, shared by the live updates of every worker
process and replica on one real Redis: counted per window in what the Bot API received."""

from __future__ import annotations

import asyncio

from clarigate.adapters.telegram import live
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.flow.live_updates import FIRST_SHOW_AFTER

from ..live_pace import SharedRedis, at_most_one_a_window, first_words_together, live_run, most_in_windows
from .test_live import GROUP_ID


def in_group(number: int) -> Conversation:
    """A run answering message ``number`` in the group."""
    return Conversation(
        platform="telegram", chat_id=str(GROUP_ID), topic=f"msg-{number}", reply_to=str(number)
    )


async def test_two_processes_share_the_groups_pace(shared_redis: SharedRedis, bench, quick_groups):
    stores = shared_redis.stores(2)
    processes = [await bench(store=store) for store in stores]
    runs = [
        (tg.adapter, in_group(10 * index + number))
        for index, tg in enumerate(processes)
        for number in range(3)
    ]
    await asyncio.gather(*(live_run(adapter, conversation, live.EDIT, 4) for adapter, conversation in runs))
    api = processes[0].api
    shown = [c.at for c in api.calls if c.method in ("sendMessage", "editMessageText")]
    assert len(shown) >= 4  # the group saw the runs move on, one update a window
    assert len(shown) <= most_in_windows(shown, live.GROUP_EDIT_INTERVAL)


async def test_one_run_alone_keeps_the_groups_pace_without_skipping(
    shared_redis: SharedRedis, bench, quick_groups
):
    [store] = shared_redis.stores(1)
    tg = await bench(store=store)
    _, updates = await live_run(tg.adapter, in_group(1), live.EDIT, 4)
    assert len(tg.api.of("sendMessage")) == 1
    assert len(tg.api.of("editMessageText")) == updates  # each one shown: none skipped


async def test_first_messages_the_groups_pace_skipped_go_out_at_the_next_windows(
    shared_redis: SharedRedis, bench, monkeypatch
):
    # six runs of one group in two processes have their first words in the same instant ("typing…"
    # until then): one message a window goes out, the others at the windows after it
    monkeypatch.setattr(live, "GROUP_EDIT_INTERVAL", 0.2)
    processes = [await bench(store=store) for store in shared_redis.stores(2)]
    api = processes[0].api
    runs = [
        (tg.adapter, in_group(10 * index + number))
        for index, tg in enumerate(processes)
        for number in range(3)
    ]

    def arrived(words: list[str]) -> bool:
        sent = " ".join(str(c.params.get("text")) for c in api.of("sendMessage"))
        return all(word in sent for word in words)

    came, refs = await first_words_together(runs, live.EDIT, arrived, 4.0)
    assert arrived([f"Answer{index}" for index in range(len(runs))])  # every run's words shown
    times = sorted(c.at for c in api.calls if c.method in ("sendMessage", "editMessageText"))
    assert len(times) == len(runs)  # each message once: nothing else wanted showing meanwhile
    for k, at in enumerate(times):  # the k-th a few windows after the words, and none together
        assert at - came <= FIRST_SHOW_AFTER + 2 * (k + 3) * live.GROUP_EDIT_INTERVAL
    assert at_most_one_a_window(times, live.GROUP_EDIT_INTERVAL)
    for (adapter, conversation), ref in zip(runs, refs, strict=True):
        await adapter.send(conversation, TextReply(text=f"Done in {conversation.topic}.", live=ref))
    edited = sorted(str(c.params.get("text")) for c in api.of("editMessageText"))
    assert edited == sorted(f"Done in {c.topic}." for _, c in runs)  # each reply once, in its message
