"""Redis (the store) unreachable while Slack delivers: 503 with ``Retry-After``, one warning line,
and the event Slack delivers again once Redis is back runs once.

The real gateway on a real Redis reached through a proxy that is cut and brought back; the events
are signed as Slack signs them.
"""

from __future__ import annotations

import logging

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from tests.http_errors import http_errors, http_unavailable

from ...conftest import RedisStoreFactory
from ...gateway.tcp_proxy import OutageProxy
from .conftest import MakeWorld
from .slack_user import next_ts

ROUTE = "/slack/events"


def web_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    """What the HTTP server logged at ``level`` or above (the worker loops say their own)."""
    return [r for r in caplog.records if r.name.startswith("clarigate.gateway.web") and r.levelno >= level]


def dm(text: str, ts: str) -> dict[str, str]:
    return {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": text, "ts": ts}


async def test_an_event_met_by_a_redis_outage_is_503_and_runs_once_when_delivered_again(
    make_world: MakeWorld,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    caplog: pytest.LogCaptureFixture,
):
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    world = await make_world(runner, store=store, streaming="off", progress_after_seconds=60.0)
    before, errors_before = http_unavailable(ROUTE), http_errors(ROUTE)
    await redis_proxy.cut()
    ts, other_ts = next_ts(), next_ts()
    with caplog.at_level(logging.DEBUG):
        # Slack's first delivery, its immediate retry, and another person's message meanwhile
        answers = [
            await world.user.event(dm("hello", ts), event_id="EvOUTAGE1"),
            await world.user.event(dm("hello", ts), event_id="EvOUTAGE1", retry=1),
            await world.user.event(dm("hi there", other_ts), event_id="EvOUTAGE2"),
        ]
    assert [r.status_code for r in answers] == [503, 503, 503]
    assert all(int(r.headers["retry-after"]) > 0 for r in answers)
    assert answers[0].json() == {"error": "service unavailable: the store is unreachable"}
    [warning] = web_lines(caplog, logging.WARNING)
    assert warning.levelno == logging.WARNING and warning.exc_info is None
    assert "webhooks are answered 503 until it is back" in warning.getMessage()
    assert not any(r.exc_info for r in web_lines(caplog, logging.DEBUG))  # no traceback
    assert http_unavailable(ROUTE) == before + 3 and http_errors(ROUTE) == errors_before
    assert runner.calls == []

    await redis_proxy.restore()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        again = await world.user.event(dm("hello", ts), event_id="EvOUTAGE1", retry=2)
        twice = await world.user.event(dm("hello", ts), event_id="EvOUTAGE1", retry=3)
        await world.settle()
    assert [again.status_code, twice.status_code] == [200, 200]
    assert [r.getMessage() for r in web_lines(caplog, logging.INFO)] == [
        "the store answers again: webhooks are answered as usual"
    ]
    assert [call.text for call in runner.calls] == ["hello"]  # once, though delivered four times
    replies = [m.get("text") for m in world.fake.of("chat.postMessage") if m.get("channel") == "D1"]
    assert replies.count("You said: hello") == 1


def asks_framework(turn: Turn) -> TurnOutput:
    """The first turn asks which framework; the answer is echoed."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=[f"Going with {turn.response.value}"])


async def test_a_click_and_a_slash_command_met_by_a_redis_outage_are_503_too(
    make_world: MakeWorld,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    caplog: pytest.LogCaptureFixture,
):
    """Slack does not redeliver these: the person sees Slack's error and can click (or type) again."""
    runner = ScriptedRunner(asks_framework)
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    world = await make_world(runner, store=store, streaming="off", progress_after_seconds=60.0)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()
    before = http_unavailable(ROUTE)
    await redis_proxy.cut()
    with caplog.at_level(logging.INFO):
        click = await world.user.click(question, "clarigate:o2")
        command = await world.user.slash_command("status")
    assert [click.status_code, command.status_code] == [503, 503]
    assert len(web_lines(caplog, logging.WARNING)) == 1 and http_unavailable(ROUTE) == before + 2
    await redis_proxy.restore()
    assert (await world.user.click(question, "clarigate:o2")).status_code == 200
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Vue"]
