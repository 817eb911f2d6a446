"""``/cancel`` of the chat thread's oldest message while it waits, no run of it begun
(``flow.withdrawals``): it is withdrawn, not reported as being worked on. Its run and its
withdrawal take the same one-time claim (``recalls.fate_lease``): a worker beginning its run at the
same moment as the ``/cancel`` either runs it (the ``/cancel`` withdraws nothing) or never does."""

from __future__ import annotations

import asyncio
from typing import Any

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageJob, Sender
from clarigate.gateway.flow.recalls import RUNS, due_and_recalled, fate_lease
from clarigate.gateway.flow.stops import StopOutcome, stops_of
from clarigate.gateway.flow.withdrawals import withdraw_waiting
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.redis import RedisStore

ADA = Sender(user_id="ada", display_name="Ada")
WITHDRAWN = "✖ Withdrawn: your waiting message “deploy the fix” will not be answered."


async def test_the_oldest_message_no_worker_took_yet_is_withdrawn(store: Store, make_gateway):
    """Ada's message is queued, the oldest of her chat, and no worker has taken it yet (every
    worker busy elsewhere): her ``/cancel`` withdraws it, and once a worker takes it, it never runs."""
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, start=False)  # its workers: not yet
    await chat.say("deploy the fix", user="ada", event_id="deploy")
    conv = chat.conversation()
    cancel = InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id="cancel")
    outstanding = (await store.chat_status(conv.thread_key)).outstanding

    stop = await stops_of(store).stop(cancel, outstanding, locale="en", policy="starter")

    assert stop.outcome is StopOutcome.WITHDRAWN  # not "I am still working on your message"
    assert stop.reply is not None and stop.reply.text == WITHDRAWN
    await gateway.start()
    await asyncio.wait_for(gateway.drain(timeout=20), 30)
    assert runner.calls == [] and chat.texts() == []  # never run, never answered
    assert await store.is_done("test:deploy")  # dropped and completed: the thread goes on
    assert not await store.acquire_lease(fate_lease("test:deploy"), RUNS, 60)  # withdrawn for good
    if isinstance(store, RedisStore):
        assert await store._command("GET", store.keys.lease(fate_lease("test:deploy"))) == "withdrawn"


def _waiting(n: int) -> tuple[Any, InboundMessage, InboundMessage]:
    """Ada's message ``n``, the oldest of its chat thread and not begun, and her ``/cancel``."""
    conv = Conversation(platform="test", chat_id=f"c-race-{n}", chat_type="private")
    task = InboundMessage(conversation=conv, sender=ADA, text="deploy the fix", event_id=f"m{n}")
    cancel = InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id=f"x{n}")
    return conv, task, cancel


async def test_a_worker_beginning_the_run_as_the_cancel_withdraws_it_leaves_one_outcome(redis_stores):
    """A worker (its own connection) begins the run of the oldest message at the very moment of
    the ``/cancel``: either it runs and nothing is withdrawn, or it is withdrawn and not run."""
    here = redis_stores()
    worker = redis_stores(here.prefix)
    outcomes = set()
    for n in range(30):
        conv, task, cancel = _waiting(n)
        payload = MessageJob(message=task).model_dump(mode="json")
        await here.accept_job(task.inbound_id, "message", task.inbound_id, conv.thread_key, payload, 600)
        (job,) = await here.waiting_jobs(conv.thread_key, 1000)
        begun, withdrawn = await asyncio.gather(
            due_and_recalled(worker, job), withdraw_waiting(here, cancel, "en", "starter")
        )
        runs = not begun[1]
        assert runs != (withdrawn is not None)  # exactly one of the two
        assert withdrawn is None or withdrawn.text == WITHDRAWN
        again = await due_and_recalled(worker, job)  # a later delivery decides the same
        assert again[1] is not runs
        outcomes.add(runs)
    assert outcomes  # (either may win: which one is Redis's order)


async def test_a_cancel_after_the_run_began_withdraws_nothing_and_says_still_working(redis_stores):
    """The run of the oldest message began in a worker not yet known to any process (its claim
    taken, the run not registered): the ``/cancel`` does not withdraw it, it says it is being worked
    on, and the job still runs."""
    here = redis_stores()
    conv, task, cancel = _waiting(99)
    payload = MessageJob(message=task).model_dump(mode="json")
    await here.accept_job(task.inbound_id, "message", task.inbound_id, conv.thread_key, payload, 600)
    (job,) = await here.waiting_jobs(conv.thread_key, 1000)
    assert await due_and_recalled(redis_stores(here.prefix), job) == (None, False)

    stop = await stops_of(here).stop(cancel, outstanding=1, locale="en", policy="starter")

    assert stop.outcome is StopOutcome.NOTHING and stop.reply is not None
    assert "I am still working on your message" in stop.reply.text
    assert await due_and_recalled(here, job) == (None, False)  # its next delivery runs it too
