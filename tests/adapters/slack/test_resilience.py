"""Slack API trouble: 429 waited out and 5xx retried by the core, a bad token stopped at start clearly."""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter, SlackStartError
from clarigate.adapters.slack.settings import SlackSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import retry
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.metrics import DELIVERY_RETRIES, PLATFORM_API_ERRORS
from clarigate.gateway.store.memory import MemoryStore

from .conftest import MakeWorld, slack_settings
from .fake_slack import APP_TOKEN, FakeSlack

#: what the line says to look at (the serve line says it alike)
BOT_TOKEN_IS = "the bot token (xoxb-…) of the installed app, under OAuth & Permissions"


def errors_counted(kind: str) -> float:
    """The current value of the Slack API error counter of ``kind``."""
    return PLATFORM_API_ERRORS.labels("slack", kind)._value.get()


async def test_a_429_storm_loses_no_reply(make_world: MakeWorld):
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"ok {turn.text}"]))
    world = await make_world(runner)
    before = errors_counted("rate_limited")
    world.fake.fail_next(3, status=429, retry_after=0, methods={"chat.postMessage"})

    await world.user.dm("one")
    await world.user.dm("two")
    await world.settle()

    assert sorted(m["text"] for m in world.fake.shown()) == ["ok one", "ok two"]
    assert [c.status for c in world.fake.attempts("chat.postMessage")].count(429) == 3
    assert errors_counted("rate_limited") - before == 3


async def test_server_errors_are_retried(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    before = errors_counted("server_error")
    world.fake.fail_next(2, status=500, methods={"chat.postMessage"})
    await world.user.dm("hello")
    await world.settle()
    assert [m["text"] for m in world.fake.shown()] == ["You said: hello"]
    assert errors_counted("server_error") - before == 2


async def test_one_server_error_costs_one_call_per_core_attempt(make_world: MakeWorld, monkeypatch):
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    world = await make_world(ScriptedRunner(), progress_after_seconds=60)
    retries_before = DELIVERY_RETRIES._value.get()
    world.fake.fail_next(1, status=500, methods={"chat.postMessage"})  # then 200
    await world.user.dm("hello")
    await world.settle()
    core_attempts = 1 + DELIVERY_RETRIES._value.get() - retries_before
    assert [m["text"] for m in world.fake.shown()] == ["You said: hello"]
    assert [c.status for c in world.fake.attempts("chat.postMessage")] == [500, 200]
    assert len(world.fake.attempts("chat.postMessage")) == core_attempts == 2  # none inside slack_sdk
    assert len(waits) == 1


async def test_start_fails_clearly_on_a_bad_token(fake_slack: FakeSlack):
    settings = slack_settings(fake_slack).model_copy(update={"bot_token": SecretStr("xoxb-revoked")})
    adapter = SlackAdapter(settings, gateway=None)  # type: ignore[arg-type]  # start() never reaches the core
    with pytest.raises(SlackStartError, match="invalid_auth"):
        await adapter.start()
    assert await adapter.check() == [f"Slack rejected SLACK_BOT_TOKEN (invalid_auth): check {BOT_TOKEN_IS}"]


async def test_start_learns_who_the_bot_is(fake_slack: FakeSlack):
    adapter = SlackAdapter(slack_settings(fake_slack), gateway=None)  # type: ignore[arg-type]
    await adapter.start()
    assert adapter.bot_user_id == "U0BOT"
    assert fake_slack.of("auth.test")
    await adapter.stop()


async def test_socket_mode_receives_events_without_a_public_url(fake_slack: FakeSlack):
    runner = ScriptedRunner()
    store = MemoryStore(f"test-{uuid.uuid4().hex[:12]}")
    gateway = Gateway(GatewayConfig(), store, runner)
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    gateway.register(SlackAdapter(settings, gateway))
    await gateway.start(workers=1)
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        event = {
            "type": "message",
            "channel_type": "im",
            "channel": "D7",
            "user": "U7",
            "text": "hi",
            "ts": "1.000001",
        }
        body = {"type": "event_callback", "team_id": "T0TEAM", "event_id": "EvSOCK", "event": event}
        await fake_slack.push(body, envelope_id="env-1")
        await fake_slack.wait_for_socket(
            lambda fake: any(a.get("envelope_id") == "env-1" for a in fake.socket_acks)
        )
        await gateway.drain(timeout=10)
        assert [c.text for c in runner.calls] == ["hi"]
        reply = fake_slack.last_shown()
        assert reply["text"] == "You said: hi" and reply["channel"] == "D7"
    finally:
        await gateway.stop(grace=1)


async def test_a_worker_process_opens_no_socket_mode_connection(fake_slack: FakeSlack):
    """``serve``'s worker process sends only: Slack would split events between two sockets,
    and the worker's would be acked behind agent runs."""
    gateway = Gateway(GatewayConfig(), MemoryStore(f"test-{uuid.uuid4().hex[:12]}"), ScriptedRunner())
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    adapter = SlackAdapter(settings, gateway)
    gateway.register(adapter)
    await gateway.start(workers=1, receive=False)
    try:
        assert fake_slack.of("auth.test")  # the token is checked: sending works
        assert not fake_slack.of("apps.connections.open") and not fake_slack.sockets
        assert await adapter.connection_up() is None
    finally:
        await gateway.stop(grace=1)


async def test_start_fails_clearly_when_slack_cannot_be_reached(fake_slack: FakeSlack, monkeypatch):
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    await fake_slack.stop()  # nothing listens on that port any more
    adapter = SlackAdapter(slack_settings(fake_slack), gateway=None)  # type: ignore[arg-type]
    with pytest.raises(SlackStartError, match="unreachable"):
        await adapter.start()
    assert len(waits) == 3  # four attempts at auth.test, by the start-up policy


def test_a_missing_bot_token_is_named():
    with pytest.raises(ValueError, match="SLACK_BOT_TOKEN"):
        SlackAdapter(SlackSettings(signing_secret=SecretStr("s")), gateway=None)  # type: ignore[arg-type]


async def test_start_fails_clearly_without_a_way_to_receive(fake_slack: FakeSlack):
    settings = slack_settings(fake_slack, signing_secret=None)
    adapter = SlackAdapter(settings, gateway=None)  # type: ignore[arg-type]
    with pytest.raises(SlackStartError, match="SLACK_SIGNING_SECRET"):
        await adapter.start()
    assert adapter.routes() == []  # no URL that could only answer 500


def test_socket_mode_without_a_signing_secret_mounts_no_events_url(fake_slack: FakeSlack):
    settings = slack_settings(fake_slack, signing_secret=None, app_token=SecretStr(APP_TOKEN))
    assert SlackAdapter(settings, gateway=None).routes() == []  # type: ignore[arg-type]


async def test_a_long_reply_failing_midway_posts_each_part_once(make_world: MakeWorld, monkeypatch):
    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "pause", no_wait)
    paragraphs = [f"Paragraph {i}: " + "word " * 300 for i in range(12)]
    world = await make_world(
        ScriptedRunner(lambda turn: TurnOutput(replies=["\n\n".join(paragraphs)])), progress_after_seconds=60
    )
    post = world.adapter.sender.post

    async def fail_after_the_first_part(*args, **kwargs):
        ts = await post(*args, **kwargs)
        if len(world.fake.attempts("chat.postMessage")) == 1:
            world.fake.fail_next(1, status=500, methods={"chat.postMessage"})  # the second part fails once
        return ts

    monkeypatch.setattr(world.adapter.sender, "post", fail_after_the_first_part)
    await world.user.dm("write a lot")
    await world.settle()
    shown = [m["text"] for m in world.fake.shown()]
    assert len(shown) > 2 and len(world.fake.attempts("chat.postMessage")) == len(shown) + 1
    assert sum(text.count("Paragraph 0:") for text in shown) == 1  # the first part was not posted again
    assert all(sum(text.count(f"Paragraph {i}:") for text in shown) == 1 for i in range(12))
