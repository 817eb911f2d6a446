"""A chat's command held by a worker that died (``kill -9``: read, never acknowledged) does not
hold up that chat's next command until the stale claim: commands take milliseconds, so the next
one waits for it at most ``COMMAND_TURN_WAIT``. The dead worker's command is answered once, when
it is claimed. Real Redis: the dead worker is a consumer that read the entry and said nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from clarigate.gateway.flow.notices import notice

from .crash import eventually

HELP, STATUS = notice("help", "en"), notice("status_title", "en")  # what /help, /status start with


async def _held_by_a_dead_worker(
    redis_stores: Any, make_gateway: Any, stale: float, first: str = "/status"
) -> tuple[Any, Any, Any]:
    """A gateway (not started yet) whose chat c1 sent ``first``, read by a worker that then died."""
    store = redis_stores()
    gateway, chat = await make_gateway(store, start=False, stale_claim_seconds=stale)
    await chat.say(first)
    dead = redis_stores(store.prefix)
    taken = await dead.read_jobs("dead-worker", count=10, block_ms=0)
    assert len(taken) == 1  # its one job, never acknowledged
    await gateway.start()
    return store, gateway, chat


async def test_a_command_answers_at_once_behind_a_command_held_by_a_dead_worker(
    redis_stores: Any, make_gateway: Any
):
    _, _, chat = await _held_by_a_dead_worker(redis_stores, make_gateway, stale=30.0)  # the default

    await chat.say("/help")
    texts = await eventually(lambda: chat.texts("c1"), within=2.5)

    assert texts[0].startswith(HELP), texts  # not half a minute later, after the stale claim


async def test_the_dead_worker_s_command_is_answered_once_when_claimed(redis_stores: Any, make_gateway: Any):
    store, _, chat = await _held_by_a_dead_worker(redis_stores, make_gateway, stale=3.0)

    await chat.say("/help")
    first = await eventually(lambda: chat.texts("c1"), within=2.5)
    assert len(first) == 1 and first[0].startswith(HELP), first  # before the claim could happen

    await eventually(lambda: len(chat.texts("c1")) > 1, within=15)  # claimed once stale: answered
    await asyncio.sleep(2.0)  # more stale claims: nothing is answered again
    texts = chat.texts("c1")
    assert len(texts) == 2 and texts[1].startswith(STATUS), texts
    pending = await store._command("XPENDING", store.keys.jobs, "workers")
    assert pending[0] == 0, pending  # both acknowledged: nothing left for another claim


async def test_a_message_still_waits_for_the_one_before_it_held_by_a_dead_worker(
    redis_stores: Any, make_gateway: Any
):
    _, _, chat = await _held_by_a_dead_worker(redis_stores, make_gateway, stale=3.0, first="m1")

    await chat.say("m2")
    await asyncio.sleep(2.0)  # longer than a command waits for the one before it
    assert chat.texts("c1") == []  # m2 waits for m1, claimed once stale

    await eventually(lambda: len(chat.texts("c1")) >= 2, within=15)
    await asyncio.sleep(0.5)
    assert chat.texts("c1") == ["You said: m1", "You said: m2"]
