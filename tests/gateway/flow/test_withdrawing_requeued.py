"""``/cancel`` of a message moved behind its thread's approval answer (``JobSteps._waits_for_answer``:
the answer was clicked after the message was queued, and runs first): the message has not run, so
it waits again and its writer's ``/cancel`` withdraws it (``recalls.waiting_again``), as any
waiting message. It is never reported as being worked on, and it never runs."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager, nullcontext

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageJob, Sender
from clarigate.gateway.flow.claim import answer_due_key
from clarigate.gateway.flow.stops import StopOutcome, stops_of
from clarigate.gateway.jobs.handle import JobHandle
from clarigate.gateway.store.records import Job

ADA = Sender(user_id="ada", display_name="Ada")
WITHDRAWN = "✖ Withdrawn: your waiting message “deploy the fix” will not be answered."


class Held(JobHandle):
    """A job a worker of this process holds (as ``jobs.worker`` hands its turn one)."""

    async def still_held(self) -> bool:
        return True

    def run_slot(self) -> AbstractAsyncContextManager[None]:
        return nullcontext()


async def _delivered(store, consumer: str) -> dict[str, Job]:
    return {job.inbound_id: job for job in await store.read_jobs(consumer, count=10, block_ms=0)}


async def test_a_message_moved_behind_an_approval_answer_is_withdrawn_by_cancel(redis_stores, make_gateway):
    store = redis_stores()
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, start=False)  # its jobs run by hand here
    conv = Conversation(platform="test", chat_id="c-behind", chat_type="private")
    task = InboundMessage(conversation=conv, sender=ADA, text="deploy the fix", event_id="deploy")
    payload = MessageJob(message=task).model_dump(mode="json")
    await store.accept_job(task.inbound_id, "message", task.inbound_id, conv.thread_key, payload, 600)
    # the approval's answer, clicked after the message was queued: its job is queued behind it
    await store.accept_job("answer-1", "answer", "answer-1", conv.thread_key, {}, 600)
    await store.set_json(answer_due_key(conv.thread_key), "answer-1", 600)

    jobs = await _delivered(store, "w1")
    await gateway.dispatcher.handle(Held(jobs[task.inbound_id]))  # moved behind the answer
    assert runner.calls == [] and not await store.is_done(task.inbound_id)

    cancel = InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id="cancel")
    outstanding = (await store.chat_status(conv.thread_key)).outstanding
    stop = await stops_of(store).stop(cancel, outstanding, locale="en", policy="starter")

    assert stop.outcome is StopOutcome.WITHDRAWN  # not "I am still working on your message"
    assert stop.reply is not None and stop.reply.text == WITHDRAWN
    await store.complete_job(jobs["answer-1"])  # the answer ran
    (again,) = (await _delivered(store, "w2")).values()  # the moved copy, its turn come
    await gateway.dispatcher.handle(Held(again))
    assert runner.calls == [] and chat.texts() == []  # never run, never answered
    assert await store.is_done(task.inbound_id)  # dropped and completed: the thread goes on
