"""Telegram's 20 messages a minute in a group, shared by the live updates of every worker
process and replica on one real Redis: counted per window in what the Bot API received."""

from __future__ import annotations

import asyncio

from clarigate.adapters.telegram import live
from clarigate.gateway.boundary.messages import Conversation

from ..live_pace import SharedRedis, live_run, most_in_windows
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
