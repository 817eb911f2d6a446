"""A job's two steps (``clarigate.gateway.flow.turn``): the *run*, which decides what to say and
records it in the store before anything is sent, then the *delivery* of what was recorded; and
the job completed once every item was delivered or abandoned. A job that changes hands after its
outputs were recorded is only delivered, never run again; one whose run failed before recording
anything is handed back, then given up after ``MAX_DELIVERIES``.

``JobSteps`` is a part of ``clarigate.gateway.flow.turn.Dispatcher``, which it is mixed into: what
a run does with a message or an answer is the dispatcher's (``_message``, ``_answer``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from clarigate.gateway.boundary.messages import AnswerJob, InboundMessage, MessageJob
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.flow.agent_run import AgentRun, Turn, ensure_held
from clarigate.gateway.flow.commands import parse_command
from clarigate.gateway.flow.delivery import Deliverer, Superseded, new_plan, persist, persist_budget
from clarigate.gateway.flow.outage import wait_for_store
from clarigate.gateway.flow.recalls import due_and_recalled, waiting_again
from clarigate.gateway.jobs.handle import HandBack, JobHandle, lacked, platform_of
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.connection import unreachable
from clarigate.gateway.store.keys import DONE_TTL_SECONDS
from clarigate.gateway.store.records import Job

log = logging.getLogger("clarigate.gateway.flow.turn")  # the turn's lines keep the name logs know


#: Deliveries of a job whose run failed before recording anything; after the last it is given up.
MAX_DELIVERIES = 3
#: What ``Dispatcher._recorded`` says of a job that had its reply already.
ANSWERED = object()
#: What ``Dispatcher._recorded`` says of a job moved behind an approval's answer (not run here).
REQUEUED = object()


class JobSteps:
    """Runs and records, delivers and completes one job (mixed into ``Dispatcher``)."""

    config: GatewayConfig
    store: Store
    outbox: Outbox
    deliverer: Deliverer
    agent_run: AgentRun
    on_done: Callable[[str], None] | None  # told each inbound id completed here

    if TYPE_CHECKING:  # the dispatcher's: what a run does with each kind of job

        async def _message(self, msg: InboundMessage, turn: Turn) -> None: ...
        async def _answer(self, job: AnswerJob, turn: Turn) -> None: ...

    async def handle(self, handle: JobHandle) -> None:
        """Run (unless its outputs were recorded already) and deliver one job, then complete it.

        Raises ``HandBack`` when the run failed before recording anything and should be retried.
        The store unreachable meanwhile is waited out in place, the job held (``flow.outage``).
        """
        job = handle.job
        set_log_context(inbound_id=job.inbound_id)
        if not self.outbox.serves(platform_of(job)):  # another replica's: ``Declined`` (jobs.worker)
            lacked(job, self.config.delivery_budget_seconds)
            return await self._complete(job)  # no replica took it within the budget: ended
        try:
            within = self.config.delivery_budget_seconds
            record = await wait_for_store(lambda: self._recorded(handle), self.outbox, handle, within)
            if record is REQUEUED:
                return  # appended again behind the answer: that copy runs and completes it
            if record is not None and record is not ANSWERED:
                held = lambda: ensure_held(handle)  # noqa: E731
                await self.deliverer.deliver(job, record, held, unproven=handle.unproven)
        except Superseded:
            # not completed here either: the worker holding it now completes it (once)
            log.warning("job %s was taken over by another worker: its reply comes from there", job.inbound_id)
            return
        await self._complete(job)

    async def _recorded(self, handle: JobHandle) -> Any:
        """The job's recorded outputs: read back (a later delivery) or made by its run step;
        ``ANSWERED`` when it had its reply already, None when it is given up."""
        job = handle.job
        # A first delivery cannot be done or recorded yet (the dedupe key admits each inbound id
        # once): save the trips.
        if job.deliveries > 1:
            if await self.store.is_done(job.inbound_id):
                return ANSWERED
            record = await self.store.delivery_record(job.inbound_id)
            if record is not None:
                log.info("job %s resumes delivery of its recorded replies", job.inbound_id)
                return record
        answer_id, recalled = await due_and_recalled(self.store, job)  # one store read
        if recalled:  # its writer took it back before it ran: dropped without a word, completed
            return None
        if await self._waits_for_answer(job, answer_id):
            return REQUEUED
        return await self._run_and_record(handle)

    async def _waits_for_answer(self, job: Job, answer_id: Any) -> bool:
        """True when message ``job`` was moved behind its thread's approval answer, clicked (and
        shown as accepted) after the message was queued, whose job has not run: run first, the
        message would end the interrupt with a rejection (``_left_open``). Moved once per answer,
        in one store step: an answer job lost meanwhile holds up no message for good. Moved, it
        has not run: it waits again (``recalls.waiting_again``), its writer's ``/cancel`` may
        withdraw it."""
        if not isinstance(answer_id, str) or await self.store.is_done(answer_id):
            return False
        if parse_command(MessageJob.model_validate_json(job.payload_json).message.text) is not None:
            return False  # a command (``/cancel`` that made the answer) ends no interrupt: in its turn
        waited = f"waited:{job.inbound_id}:{answer_id}"
        if await self.store.get_json(waited) is not None:
            return False
        if not await self.store.requeue_job(job):
            # acknowledged already (this very move, its reply lost and re-sent; or completed by
            # a worker that took the job over): either way it is not run here
            return True
        log.info("message %s waits behind answer %s, clicked before it ran", job.inbound_id, answer_id)
        await self.store.set_json(waited, 1, DONE_TTL_SECONDS)
        await waiting_again(self.store, job)  # not run: its writer's /cancel may withdraw it
        return True

    async def _run_and_record(self, handle: JobHandle) -> Any:
        """The run step: what to say, recorded. None when the job is given up."""
        job = handle.job
        turn = Turn(handle)
        try:
            if job.kind in ("message", "command"):
                await self._message(MessageJob.model_validate_json(job.payload_json).message, turn)
            else:
                await self._answer(AnswerJob.model_validate_json(job.payload_json), turn)
            if turn.conversation is None or not turn.items:
                return None
            plan = new_plan(job.inbound_id, turn.conversation, turn.items)
            await ensure_held(handle)  # a superseded run records nothing
            # a thread that ran is deleted from the checkpointer once its chat mapping has expired
            # (unused for thread_ttl_seconds) and the retention period has passed
            unused_after = self.config.thread_ttl_seconds + self.config.thread_retention_seconds
            cleanup = (turn.thread_id, plan.created_at + unused_after) if turn.thread_id else None
            # the agent has run: its outputs are recorded through a store outage, never run again
            return await wait_for_store(
                lambda: self.store.record_delivery(
                    job.inbound_id, plan.model_dump_json(), DONE_TTL_SECONDS, cleanup, turn.with_record
                ),
                self.outbox,
                handle,
                self.config.delivery_budget_seconds,
            )
        except (Superseded, HandBack):
            raise
        except Exception as exc:
            if unreachable(exc):
                raise  # the store is away: waited out in place (``handle``), not counted as a failure
            if job.deliveries < MAX_DELIVERIES:
                log.exception(
                    "job %s failed before its reply was recorded (delivery %d): retrying",
                    job.inbound_id,
                    job.deliveries,
                )
                raise HandBack(job.inbound_id) from None
            metrics.JOBS_GIVEN_UP.inc()
            log.exception("job %s failed %d times: giving up", job.inbound_id, job.deliveries)
            if turn.conversation is not None:
                await self.agent_run.end_left_live(turn.conversation, job)
            if job.kind != "answer":
                await self.store.forget(job.inbound_id)  # a redelivery by the platform may retry
            return None

    async def _complete(self, job: Job) -> None:
        """Record the job done; retried through a store outage, since its reply has gone out.

        A job left uncompleted would be claimed and its last reply sent again by another worker:
        while this retries, the job stays held here and its keeper renews it once Redis is back.
        """
        await persist(
            lambda: self.store.complete_job(job),
            f"completing job {job.inbound_id}",
            persist_budget(self.config),
        )
        if self.on_done is not None:
            self.on_done(job.inbound_id)
