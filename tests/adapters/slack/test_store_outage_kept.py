"""Slack's last retry of an event met by a Redis outage is kept on the replica's disk and answered
200 (Slack would drop it after a refusal); once Redis answers the kept job is queued and runs once.

Slack retries an Events API event three times (``X-Slack-Retry-Num`` 1, 2, 3), at once, after a
minute and after five, and then gives up. The real gateway on a real Redis reached through a
proxy that is cut and brought back; the events are signed as Slack signs them; the kept jobs are
written to a SQLite file in the test's data directory.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.slack.receive import IGNORED_REQUESTS
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.flow.kept import Spool, spool_path
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.redis import RedisStore
from tests.http_errors import http_unavailable

from ...conftest import RedisStoreFactory
from ...gateway.tcp_proxy import OutageProxy
from .conftest import MakeWorld, SlackWorld, slack_settings
from .fake_slack import APP_TOKEN, FakeSlack
from .slack_user import next_ts

ROUTE = "/slack/events"


def dm(text: str, ts: str) -> dict[str, str]:
    return {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": text, "ts": ts}


def kept_count() -> float:
    return metrics.KEPT_ON_DISK.labels(platform="slack")._value.get()


async def world_on(make_world: MakeWorld, store: RedisStore, data_dir: Path) -> SlackWorld:
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    return await make_world(
        runner, store=store, streaming="off", progress_after_seconds=60.0, data_dir=str(data_dir)
    )


def replies_to(world: SlackWorld, text: str) -> int:
    replies = [m.get("text") for m in world.fake.of("chat.postMessage") if m.get("channel") == "D1"]
    return replies.count(f"You said: {text}")


def kept_in(data_dir: Path) -> list[str]:
    """The inbound ids of the jobs still in the data directory's file."""
    spool = Spool(spool_path(str(data_dir), "clarigate"))
    try:
        return [job["inbound_id"] for _, _, job in spool.oldest(100)]
    finally:
        spool.close()


async def test_slacks_last_retry_is_kept_and_runs_once_when_redis_is_back(
    make_world: MakeWorld,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
):
    world = await world_on(make_world, redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0"), tmp_path)
    unavailable, kept = http_unavailable(ROUTE), kept_count()
    await redis_proxy.cut()
    ts = next_ts()
    with caplog.at_level(logging.INFO):
        refused = [await world.user.event(dm("hello", ts), event_id="EvKEPT1", retry=n) for n in (None, 1, 2)]
        last = await world.user.event(dm("hello", ts), event_id="EvKEPT1", retry=3)
    assert [r.status_code for r in refused] == [503, 503, 503]  # Slack delivers these again
    assert last.status_code == 200  # Slack would not: kept on disk
    assert http_unavailable(ROUTE) == unavailable + 3 and kept_count() == kept + 1
    assert kept_in(tmp_path) == ["slack:D1:" + ts]
    assert world.runner.calls == []
    [line] = [r.getMessage() for r in caplog.records if r.name == "clarigate.gateway.flow.kept"]
    assert "slack event slack:D1:" in line and "kept on disk" in line

    caplog.clear()
    await redis_proxy.restore()
    with caplog.at_level(logging.INFO):
        await world.settle()  # waits for the kept job too: queued once Redis answers, then run
    assert [c.text for c in world.runner.calls] == ["hello"]
    assert replies_to(world, "hello") == 1
    assert kept_in(tmp_path) == []
    drained = [r.getMessage() for r in caplog.records if r.name == "clarigate.gateway.flow.kept"]
    assert drained == ["the store answers: events kept on disk queued (1 slack)"]


async def test_a_kept_event_also_delivered_after_the_outage_runs_once(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, tmp_path: Path
):
    world = await world_on(make_world, redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0"), tmp_path)
    await redis_proxy.cut()
    ts = next_ts()
    assert (await world.user.event(dm("only once", ts), event_id="EvKEPT2", retry=3)).status_code == 200
    await redis_proxy.restore()
    # the same message reaches the gateway as usual too (another delivery of the event)
    assert (await world.user.event(dm("only once", ts), event_id="EvKEPT2b")).status_code == 200
    await world.settle()
    assert [c.text for c in world.runner.calls] == ["only once"]
    assert replies_to(world, "only once") == 1
    assert kept_in(tmp_path) == []


async def test_a_replica_restarted_with_kept_events_queues_them_at_start(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, tmp_path: Path
):
    url = f"redis://127.0.0.1:{redis_proxy.port}/0"
    store = redis_stores(url=url)
    first = await world_on(make_world, store, tmp_path)
    await redis_proxy.cut()
    ts = next_ts()
    assert (
        await first.user.event(dm("before the restart", ts), event_id="EvKEPT3", retry=3)
    ).status_code == 200
    await first.gateway.stop(grace=0)  # the replica goes away during the outage
    assert kept_in(tmp_path) == ["slack:D1:" + ts]

    await redis_proxy.restore()
    second = await world_on(make_world, redis_stores(store.prefix, url=url), tmp_path)
    await second.gateway.drain(timeout=20, inbound_ids=["slack:D1:" + ts])
    await second.adapter.idle()
    assert first.runner.calls == []
    assert [c.text for c in second.runner.calls] == ["before the restart"]
    assert replies_to(second, "before the restart") == 1
    assert kept_in(tmp_path) == []


async def test_the_last_socket_mode_retry_is_kept_and_acknowledged_too(
    fake_slack: FakeSlack, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, tmp_path: Path
):
    """Over Socket Mode the envelope's ``retry_attempt`` numbers Slack's retries (Bolt passes it on
    as ``X-Slack-Retry-Num``): the third is kept and acknowledged instead of left unacknowledged."""
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    config = GatewayConfig(streaming="off", progress_after_seconds=60.0, data_dir=str(tmp_path))
    gateway = Gateway(config, store, runner)
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    gateway.register(SlackAdapter(settings, gateway))
    await gateway.start(workers=1)
    acked = lambda envelope: any(a.get("envelope_id") == envelope for a in fake_slack.socket_acks)  # noqa: E731
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D1",
        "user": "U1",
        "text": "hi",
        "ts": "4.1",
    }
    payload = {"type": "event_callback", "team_id": "T0TEAM", "event_id": "EvKEPT4", "event": event}
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        await redis_proxy.cut()
        await fake_slack.push(payload, envelope_id="env-last", retry_attempt=3)
        await fake_slack.wait_for_socket(lambda fake: acked("env-last"))
        assert kept_in(tmp_path) == ["slack:D1:4.1"] and runner.calls == []
        await redis_proxy.restore()
        await gateway.drain(timeout=20)
        assert [c.text for c in runner.calls] == ["hi"]
        replies = [m.get("text") for m in fake_slack.of("chat.postMessage") if m.get("channel") == "D1"]
        assert replies.count("You said: hi") == 1
        assert kept_in(tmp_path) == []
    finally:
        await gateway.stop(grace=1)


def thread_reply(text: str, thread_ts: str, ts: str) -> dict[str, str]:
    """A plain reply (no mention of the bot) in a channel thread: the bot's only if it takes part."""
    return {
        "type": "message",
        "channel_type": "channel",
        "channel": "C1",
        "user": "U1",
        "text": text,
        "ts": ts,
        "thread_ts": thread_ts,
    }


def said_in(world: SlackWorld, thread_ts: str) -> list[str]:
    """What the bot posted in the thread of ``thread_ts`` in channel C1."""
    posted = world.fake.of("chat.postMessage")
    return [m.get("text") for m in posted if m.get("channel") == "C1" and m.get("thread_ts") == thread_ts]


def ignored_count() -> float:
    return IGNORED_REQUESTS.labels("event:message")._value.get()


@pytest.mark.parametrize("called_by", ["a request", "a bare mention"])
async def test_a_reply_in_the_bots_thread_on_slacks_last_retry_is_kept_and_answered_when_redis_is_back(
    make_world: MakeWorld,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    tmp_path: Path,
    called_by: str,
):
    """Whether the bot takes part in the thread is in Redis (the thread's agent thread, or the
    mark a bare mention leaves): the reply is kept with the question open, and answered once
    Redis says the thread is the bot's."""
    world = await world_on(make_world, redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0"), tmp_path)
    _, top = await world.user.mention("start" if called_by == "a request" else "")
    await world.settle()
    before = [c.text for c in world.runner.calls]
    await redis_proxy.cut()
    ts = next_ts()
    refused = await world.user.event(thread_reply("and then?", top, ts), event_id="EvKEPT5", retry=1)
    assert refused.status_code == 503  # Slack delivers it again
    last = await world.user.event(thread_reply("and then?", top, ts), event_id="EvKEPT5", retry=3)
    assert last.status_code == 200
    assert kept_in(tmp_path) == ["slack:C1:" + ts]

    await redis_proxy.restore()
    await world.settle()
    assert [c.text for c in world.runner.calls] == [*before, "and then?"]
    assert said_in(world, top).count("You said: and then?") == 1
    assert kept_in(tmp_path) == []


async def test_a_kept_reply_in_a_thread_the_bot_takes_no_part_in_is_dropped_without_a_word(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, tmp_path: Path
):
    world = await world_on(make_world, redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0"), tmp_path)
    ignored = ignored_count()
    await redis_proxy.cut()
    top, ts = next_ts(), next_ts()  # people talking in a thread of their own
    refused = await world.user.event(thread_reply("lunch?", top, ts), event_id="EvKEPT6", retry=1)
    assert refused.status_code == 503
    last = await world.user.event(thread_reply("lunch?", top, ts), event_id="EvKEPT6", retry=3)
    assert last.status_code == 200
    assert kept_in(tmp_path) == ["slack:C1:" + ts]

    await redis_proxy.restore()
    await world.settle()  # the kept job is queued, taken and dropped
    assert world.runner.calls == []
    assert [c.method for c in world.fake.calls if c.params.get("channel") == "C1"] == []
    assert kept_in(tmp_path) == []
    assert ignored_count() == ignored + 1  # counted as the chatter it is
