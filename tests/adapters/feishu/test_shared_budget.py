"""Feishu's per-app budget of live updates (1000 calls a minute on each API: the message PATCH,
CardKit's streamed text) shared by every worker process and replica through the store."""

from __future__ import annotations

import asyncio
import json
import uuid
from types import SimpleNamespace

from clarigate.adapters.feishu import FeishuAdapter, live
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.flow.live_updates import FIRST_SHOW_AFTER

from ..live_pace import SharedRedis, at_most_one_a_window, first_words_together, live_run, most_in_windows
from .cards import text_of
from .conftest import feishu_settings
from .fake_open_api import FakeOpenApi

#: 4 updates a second stand for Feishu's 1000 a minute (12 a second, less room for the rest):
#: the same sharing, counted over a few seconds.
QUICK_CALLS_PER_SECOND = 4.0


def processes(api: FakeOpenApi, stores: list, app_id: str) -> list[FeishuAdapter]:
    """One app's adapter in each "process", each on its own client of the shared store."""
    settings = feishu_settings(api, app_id=app_id)
    return [FeishuAdapter(settings, SimpleNamespace(state=store)) for store in stores]  # type: ignore[arg-type]


def chat(index: int) -> Conversation:
    return Conversation(platform="feishu", workspace="t", chat_id=f"oc_group{index}")


async def test_two_processes_patch_cards_within_the_apps_budget(
    shared_redis: SharedRedis, fake_api: FakeOpenApi, monkeypatch
):
    monkeypatch.setattr(live, "CALLS_PER_SECOND", QUICK_CALLS_PER_SECOND)
    stores = shared_redis.stores(2)
    adapters = processes(fake_api, stores, f"cli_{uuid.uuid4().hex[:10]}")
    runs = [(adapter, chat(number)) for adapter in adapters for number in range(6)]
    # alone, each process would pace its six by its own count: together far over the budget
    done = await asyncio.gather(*(live_run(a, c, "edit", 4) for a, c in runs))
    patches = [c.at for c in fake_api.patched()]
    assert len(patches) >= 12  # every run's card moved on
    assert len(patches) <= most_in_windows(patches, 1 / QUICK_CALLS_PER_SECOND)
    for (adapter, conversation), (ref, _) in zip(runs, done, strict=True):
        await adapter.send(conversation, TextReply(text=f"Done in {conversation.chat_id}.", live=ref))
    wanted = sorted(f"Done in {c.chat_id}." for _, c in runs)
    assert sorted(text_of(card) for card in fake_api.shown()) == wanted
    for adapter in adapters:
        await adapter.stop()


async def test_one_process_alone_edits_every_update_about_once_a_second(
    shared_redis: SharedRedis, fake_api: FakeOpenApi
):
    stores = shared_redis.stores(1)
    [adapter] = processes(fake_api, stores, f"cli_{uuid.uuid4().hex[:10]}")
    conversation = chat(1)
    assert adapter.live_interval(conversation, "edit") == live.EDIT_INTERVAL
    _, updates = await live_run(adapter, conversation, "edit", 4)
    # nothing held back or skipped: the app's budget has room for one run's rhythm
    assert len(fake_api.patched()) == updates
    await adapter.stop()


async def test_first_words_the_budget_skipped_go_out_at_the_next_windows_not_an_interval_later(
    shared_redis: SharedRedis, fake_api: FakeOpenApi, monkeypatch
):
    # ten streaming cards in two processes want their first words out in the same instant: the
    # app's budget lets one a window through; the others try again at the next window (0.1 s),
    # not after the card's interval (5 s here, longer than this test waits)
    monkeypatch.setattr(live, "CALLS_PER_SECOND", 10.0)
    monkeypatch.setattr(live, "CARD_INTERVAL", 5.0)
    window = 1 / live.CALLS_PER_SECOND
    adapters = processes(fake_api, shared_redis.stores(2), f"cli_{uuid.uuid4().hex[:10]}")
    runs = [
        (adapter, chat(10 * index + number)) for index, adapter in enumerate(adapters) for number in range(5)
    ]

    def content_calls() -> list:
        return fake_api.cardkit_calls("content")

    def arrived(words: list[str]) -> bool:
        return all(any(word in json.dumps(c.body) for c in content_calls()) for word in words)

    came, refs = await first_words_together(runs, "card", arrived, deadline=4.0)
    assert arrived([f"Answer{index}" for index in range(len(runs))])  # every run's words shown
    times = sorted(c.at for c in content_calls())
    assert len(times) == len(runs)  # each once: nothing else wanted showing meanwhile
    # the k-th one a few windows after the words were held (FIRST_SHOW_AFTER), and none together
    for k, at in enumerate(times):
        assert at - came <= FIRST_SHOW_AFTER + 2 * (k + 3) * window
    assert at_most_one_a_window(times, window)
    for (adapter, conversation), ref in zip(runs, refs, strict=True):
        await adapter.send(conversation, TextReply(text=f"Done in {conversation.chat_id}.", live=ref))
    wanted = sorted(f"Done in {c.chat_id}." for _, c in runs)
    assert sorted(text_of(card) for card in fake_api.shown()) == wanted  # each reply once
    for adapter in adapters:
        await adapter.stop()
