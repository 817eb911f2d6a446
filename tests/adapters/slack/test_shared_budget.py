"""Slack's per-workspace budgets of live updates (``chat.update`` 50 a minute, ``chat.appendStream``
100) shared by every worker process and replica through the store, not counted in each one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from redis.asyncio import Redis

from clarigate.adapters import pacing
from clarigate.adapters.slack import SlackAdapter, live
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.flow.live_updates import FIRST_SHOW_AFTER

from ..live_pace import (
    REDIS_URL,
    SharedRedis,
    at_most_one_a_window,
    counted,
    first_words_together,
    live_run,
    most_in_windows,
)
from .conftest import MakeWorld, SlackWorld
from .fake_slack import FakeSlack
from .test_live_replies import in_thread

#: A budget of 5 edits in 1.5 s (a window of 0.3 s) stands for Slack's 50 a minute: the same
#: sharing, counted over a few seconds rather than minutes.
QUICK = pacing.Budget(5, 1.5)


def words_appended(fake: FakeSlack) -> Callable[[list[str]], bool]:
    """Whether every run's first words ("Answer12 begins here") reached Slack in an append."""

    def arrived(words: list[str]) -> bool:
        appended = json.dumps(fake.of("chat.appendStream"))
        return all(f"{word} begins" in appended for word in words)

    return arrived


def threads_in_one_channel(processes: list[SlackWorld], each: int) -> list[tuple[SlackAdapter, Conversation]]:
    """``each`` live runs in every process, in threads of one channel (so of one workspace)."""
    return [
        (world.adapter, in_thread(f"1.{index}{number:03}", channel="C9"))
        for index, world in enumerate(processes)
        for number in range(each)
    ]


async def test_two_processes_edit_within_one_workspace_budget(
    shared_redis: SharedRedis, make_world: MakeWorld, monkeypatch
):
    monkeypatch.setattr(live, "EDIT_BUDGET", QUICK)
    stores = shared_redis.stores(2)
    processes = [await make_world(ScriptedRunner(), store=store) for store in stores]
    fake = processes[0].fake
    runs = threads_in_one_channel(processes, 4)  # four live runs in each process, one workspace
    # alone, each process would pace its four by its own count: together twice the budget
    done = await asyncio.gather(*(live_run(a, c, live.EDIT, 5) for a, c in runs))
    edits = [c.at for c in fake.attempts("chat.update")]
    assert len(edits) >= 8  # every run's message moved on
    assert len(edits) <= most_in_windows(edits, QUICK.window)
    for (adapter, conversation), (ref, _) in zip(runs, done, strict=True):
        await adapter.send(conversation, TextReply(text=f"Done in {conversation.topic}.", live=ref))
    assert sorted(m["text"] for m in fake.shown()) == sorted(f"Done in {c.topic}." for _, c in runs)


async def test_one_process_alone_streams_every_update_about_once_a_second(
    shared_redis: SharedRedis, make_world: MakeWorld
):
    [store] = shared_redis.stores(1)
    world = await make_world(ScriptedRunner(), store=store)
    conversation = in_thread("1.1")
    assert world.adapter.live_interval(conversation, live.STREAM) == live.LIVE_INTERVAL
    _, updates = await live_run(
        world.adapter, conversation, live.STREAM, 4, recipient=Sender(user_id="U1"), shown=""
    )
    # nothing held back or skipped: the workspace's budget has room for one run's rhythm
    assert len(world.fake.attempts("chat.appendStream")) == updates
    assert len(world.fake.of("chat.startStream")) == 1


@pytest.mark.parametrize("method", ["chat.update", "chat.appendStream"])
async def test_the_workspace_and_method_name_the_shared_window(
    shared_redis: SharedRedis, make_world: MakeWorld, method
):
    [store] = shared_redis.stores(1)
    world = await make_world(ScriptedRunner(), store=store)
    slot = world.adapter.live._slot
    await slot("T1", method)
    await slot("T2", method)  # another workspace: its own budget
    other = "chat.appendStream" if method == "chat.update" else "chat.update"
    await slot("T1", other)  # another method: its own budget
    client = Redis.from_url(REDIS_URL)
    found = [key async for key in client.scan_iter(match=f"{shared_redis.prefix}:*live-pace:*")]
    await client.aclose()
    assert {key.decode().split("live-pace:")[1].rsplit(":", 1)[0] for key in found} == {
        f"T1:{method}",
        f"T2:{method}",
        f"T1:{other}",
    }


async def test_first_words_the_budget_skipped_go_out_at_the_next_windows_not_an_interval_later(
    shared_redis: SharedRedis, make_world: MakeWorld, monkeypatch
):
    # eight streams of one workspace in two processes want their first words appended in the same
    # instant: the workspace's budget lets one a window through (0.15 s here); the others try
    # again at the next window, not after the stream's interval (5 s, longer than this test waits)
    monkeypatch.setattr(live, "STREAM_BUDGET", pacing.Budget(10, 1.5))
    monkeypatch.setattr(live, "LIVE_INTERVAL", 5.0)
    window = live.STREAM_BUDGET.window
    processes = [await make_world(ScriptedRunner(), store=store) for store in shared_redis.stores(2)]
    fake = processes[0].fake
    runs = threads_in_one_channel(processes, 4)

    arrived = words_appended(fake)
    came, refs = await first_words_together(runs, live.STREAM, arrived, 5.0, recipient=Sender(user_id="U1"))
    assert len(fake.of("chat.startStream")) == len(runs)  # "Working…" at once, unpaced
    assert arrived([f"Answer{index}" for index in range(len(runs))])  # every run's words shown
    times = sorted(c.at for c in fake.attempts("chat.appendStream"))
    assert len(times) == len(runs)  # each once: nothing else wanted showing meanwhile
    for k, at in enumerate(times):  # the k-th a few windows after the words, and none together
        assert at - came <= FIRST_SHOW_AFTER + 2 * (k + 3) * window
    assert at_most_one_a_window(times, window)
    for (adapter, conversation), ref in zip(runs, refs, strict=True):
        await adapter.send(conversation, TextReply(text=f"Done in {conversation.topic}.", live=ref))
    assert sorted(m["text"] for m in fake.shown()) == sorted(f"Done in {c.topic}." for _, c in runs)


async def test_runs_skipped_together_cost_the_store_a_lease_attempt_a_window_per_process(
    shared_redis: SharedRedis, make_world: MakeWorld, monkeypatch
):
    # fifty streams of one workspace in two processes want their first words appended in the same
    # instant: one goes out a window, fifty windows in all. Each process asks the store for a
    # window once, for all of its runs waiting (not once per run: fifty, forty-nine, … a window)
    monkeypatch.setattr(live, "STREAM_BUDGET", pacing.Budget(20, 1.0))
    monkeypatch.setattr(live, "LIVE_INTERVAL", 60.0)
    stores = shared_redis.stores(2)
    asked: list[str] = []
    for store in stores:
        monkeypatch.setattr(store, "acquire_lease", counted(store.acquire_lease, asked))
    processes = [await make_world(ScriptedRunner(), store=store) for store in stores]
    fake = processes[0].fake
    runs = threads_in_one_channel(processes, 25)

    arrived = words_appended(fake)
    await first_words_together(runs, live.STREAM, arrived, 60.0, recipient=Sender(user_id="U1"))
    assert arrived([f"Answer{index}" for index in range(len(runs))])
    appends = len(fake.attempts("chat.appendStream"))
    assert appends == len(runs)  # a window each
    pace_leases = [name for name in asked if name.startswith("live-pace:")]
    # at most one attempt a window in each process: linear in the runs, not quadratic
    assert len(pace_leases) <= len(processes) * appends
