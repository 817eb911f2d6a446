"""A command held by a worker that died (``kill -9``: read, never acknowledged) runs late, once
claimed as stale. It acts on the chat as it was when the person sent it: a late ``/cancel``
closes the question that was open then, never one the bot asked after it was sent (the person
never saw that one); a late ``/new`` holds the chat thread's later messages until it ran, so it
resets nothing that went on meanwhile. Real Redis: the dead worker is a consumer that read the
entry and said nothing more.
"""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.notices import notice

from .crash import eventually

STALE = 3.0  # the stale-claim time: the dead worker's command runs this late (or a little more)
COLOUR = choice_request("Which colour should the logo be?", ["Red", "Blue"])
SIZE = choice_request("Which size should the logo be?", ["Small", "Large"])


def _script(turn: Turn) -> TurnOutput:
    """``logo`` asks the colour; its answer asks the size; anything else is echoed."""
    if turn.response is not None:
        return asking(SIZE) if turn.response.request_id == COLOUR.request_id else TurnOutput(replies=["ok"])
    if turn.text == "logo":
        return asking(COLOUR)
    return TurnOutput(replies=[f"You said: {turn.text}"])


async def _sent_to_a_dead_worker(redis_stores: Any, make_gateway: Any, *said: str) -> tuple[Any, Any]:
    """A started gateway whose chat c1 sent ``said`` (run), then a command read by a worker that
    died: the last of ``said``."""
    store = redis_stores()
    gateway, chat = await make_gateway(store, ScriptedRunner(_script), stale_claim_seconds=STALE)
    for text in said[:-1]:
        await chat.say(text)
    await gateway.drain()
    await gateway.pool.stop(grace=1.0)  # nobody reads the command but the dead worker
    await chat.say(said[-1])
    taken = await redis_stores(store.prefix).read_jobs("dead-worker", count=10, block_ms=0)
    assert len(taken) == 1  # the command, never acknowledged
    gateway.pool.start()
    return gateway, chat


async def _is_open(gateway: Any, token: str) -> bool:
    return (await gateway.pending_by_token(token)).status == "pending"


async def test_a_late_cancel_leaves_open_a_question_asked_after_it_was_sent(
    redis_stores: Any, make_gateway: Any
):
    gateway, chat = await _sent_to_a_dead_worker(redis_stores, make_gateway, "/cancel")

    await chat.say("logo")  # after the /cancel: the bot asks a question the /cancel never saw
    await eventually(lambda: chat.requests(), within=5)
    token = chat.last_request().token
    late = await eventually(lambda: chat.texts("c1"), within=20)  # claimed once stale: answered

    assert late == [notice("cancel_came_late", "en", cancel="/cancel", question=COLOUR.question)]
    assert chat.closed() == []  # the question stays open, its buttons still answer it
    assert await _is_open(gateway, token)
    assert (await chat.click(0)).status.value == "accepted"


async def test_a_late_cancel_still_closes_the_question_that_was_open_when_it_was_sent(
    redis_stores: Any, make_gateway: Any
):
    gateway, chat = await _sent_to_a_dead_worker(redis_stores, make_gateway, "logo", "/cancel")
    token = chat.last_request().token

    cancelled = notice("cancelled", "en", question=COLOUR.question)
    await eventually(lambda: cancelled in chat.texts("c1"), within=20)  # the person's decision, late

    assert not await _is_open(gateway, token)
    assert len(chat.closed()) == 1


async def test_a_late_cancel_leaves_open_the_next_question_after_the_one_it_meant_was_answered(
    redis_stores: Any, make_gateway: Any
):
    gateway, chat = await _sent_to_a_dead_worker(redis_stores, make_gateway, "logo", "/cancel")

    assert (await chat.click(0)).status.value == "accepted"  # the colour answered: the size is asked
    await eventually(lambda: len(chat.requests()) == 2, within=5)
    token = chat.last_request().token
    late = await eventually(lambda: chat.texts("c1"), within=20)  # claimed once stale: answered

    assert late == [notice("cancel_came_late", "en", cancel="/cancel", question=SIZE.question)]
    assert await _is_open(gateway, token)


async def test_a_late_new_holds_the_messages_after_it_and_resets_nothing_they_started(
    redis_stores: Any, make_gateway: Any
):
    gateway, chat = await _sent_to_a_dead_worker(redis_stores, make_gateway, "hello", "/new")

    await chat.say("logo")  # after the /new: waits for it, then runs in the new conversation
    await eventually(lambda: chat.requests(), within=20)
    token = chat.last_request().token

    texts = chat.texts("c1")
    assert texts == ["You said: hello", notice("new_thread", "en")], texts
    assert await _is_open(gateway, token)  # the question the later message asked stays open
    hello, logo = gateway.runner.calls
    assert logo.thread_id != hello.thread_id  # the later message ran in the new conversation
