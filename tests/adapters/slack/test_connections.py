"""The Slack client keeps one keep-alive connection to the Web API instead of one per call."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld


async def test_web_api_calls_share_one_connection(make_world: MakeWorld) -> None:
    world = await make_world(ScriptedRunner())
    world.fake.connections.clear()  # auth.test at start checks the token before the session exists
    for i in range(4):
        await world.user.dm(f"hello {i}")
        await world.settle()  # one call at a time: a pooled connection is free for the next

    posted = world.fake.of("chat.postMessage")
    assert len(posted) >= 4  # each reply (and "working…") went out
    assert len(world.fake.connections) == 1  # every call since the start: one socket


async def test_stopping_closes_the_session(make_world: MakeWorld) -> None:
    world = await make_world(ScriptedRunner())
    session = world.adapter.client.session
    assert session is not None and not session.closed
    await world.adapter.stop()
    assert session.closed
