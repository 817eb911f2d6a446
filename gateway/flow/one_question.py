"""A conversation has one open question: the agent's new question replaces the thread's older one.

A question a run asks is saved as its agent thread's open question (``Store.save_pending``). The
question that pointer held, asked of anyone and still open (another member's request ran over
it, or an answer's run crossed another member's request), closes then as ``replaced`` for
everyone, as a new message closes one as superseded (``Control.close_question``): its message is
shown closed, and a later click on it says so, naming the one the newer question is for. Saving
the question is the one step every path that asks goes through (a request, a typed or clicked
answer, a Cancel's or ``/cancel``'s declined answer), so none leaves two questions open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from clarigate.agent.interrupt_kinds import parse_request_id
from clarigate.agent.protocol import DeclineReason
from clarigate.gateway.boundary.messages import AnswerJob, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.flow.departures import note_asked
from clarigate.gateway.flow.outage import wait_for_store
from clarigate.gateway.jobs.handle import JobHandle
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

#: Closes a question without an answer (``Control.close_question``).
CloseQuestion = Callable[[PendingRecord, Sender, DeclineReason], Awaitable[object]]


class OneQuestion:
    """Saves the agent's questions, closing the one each replaces."""

    def __init__(self, store: Store, outbox: Outbox, close: CloseQuestion, within: float) -> None:
        self.store = store
        self.outbox = outbox
        self.close = close
        self.within = within  # how long a store outage is waited out (the agent has run)

    async def save(self, record: PendingRecord, sender: Sender, handle: JobHandle) -> None:
        """Save ``record`` as its thread's open question; the open one it replaces closes as
        ``replaced`` (``sender`` is the one the new question is for). Each step is waited out
        through a store outage: the agent has run, and its question is never asked again."""
        thread_id = record.thread_id
        older = await wait_for_store(
            lambda: self.store.pending_for_thread(thread_id), self.outbox, handle, self.within
        )
        await wait_for_store(lambda: self.store.save_pending(record), self.outbox, handle, self.within)
        await note_asked(self.store, record)  # closed if its asker leaves the chat (flow/departures.py)
        if older is not None and older.request_id != record.request_id:
            await wait_for_store(
                lambda: self.close(older, sender, "replaced"), self.outbox, handle, self.within
            )


async def close_crossed_interrupt(store: Store, close: CloseQuestion, job: AnswerJob) -> None:
    """Before an answer's run (``job``: its sender's answer): the thread's open question,
    when it is another one that holds the agent's run (an approval, a graph's ``interrupt()``,
    asked while the answer waited its turn), closes as ``crossed`` naming its sender: the run
    ends that interrupt with a rejection before the agent reads the answer (``supersede``), so its
    later click would otherwise be accepted for a decision no longer there. Not ``superseded``:
    the sender wrote no new message, their answer to an earlier question ran first."""
    pending = await store.pending_for_thread(job.thread_id)
    if pending is None or pending.status != "pending" or pending.request_id == job.request_id:
        return
    if parse_request_id(pending.request_id) is not None:
        await close(pending, job.sender, "crossed")
