"""The gateway core: dispatch between adapters, the store and the agent runner.

Public surface (other modules and tests rely on these names):

    gateway = Gateway(config, store, runner)
    gateway.register(adapter)             # a PlatformAdapter
    await gateway.start(workers=4)        # adapters' start() + stream workers
    await gateway.drain(timeout=10)       # tests: wait until every accepted job is done
    await gateway.stop(grace=10)          # stop taking work, finish or hand back, close

``Gateway`` implements ``clarigate.gateway.boundary.port.GatewayPort`` for adapters; its answers
half is ``clarigate.gateway.flow.answer_intake``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Iterable
from functools import partial
from typing import Any

from clarigate.agent.bounded import BoundedDict
from clarigate.gateway.boundary.messages import (
    AcceptOutcome,
    Conversation,
    InboundMessage,
    MessageJob,
)
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.port import AdapterState, PlatformAdapter
from clarigate.gateway.flow.access import allowed, refuse_once
from clarigate.gateway.flow.answer_intake import AnswerIntake
from clarigate.gateway.flow.commands import CONTROL_LANE, Control, parse_command
from clarigate.gateway.flow.departures import Departures
from clarigate.gateway.flow.feedback import FeedbackVotes
from clarigate.gateway.flow.kept import KeptJobs, spool_path
from clarigate.gateway.flow.recalls import Recalls
from clarigate.gateway.flow.turn import Dispatcher
from clarigate.gateway.jobs.upkeep import Upkeep
from clarigate.gateway.jobs.worker import WorkerPool
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

log = logging.getLogger(__name__)

MAX_TRACKED = 10_000  # how many accepted inbound ids ``drain`` remembers (a bound for long runs)


class Gateway(AnswerIntake):
    """Implements ``GatewayPort``: accepts messages and answers, runs them through the workers.

    The answers (``pending_by_token``, ``may_answer``, ``submit_answer``) are ``AnswerIntake``'s
    (``flow/answer_intake.py``).
    """

    def __init__(self, config: GatewayConfig, store: Store, runner: AgentRunner) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        self.state: AdapterState = store  # adapter state (wizards, leases) under the bot prefix
        self.outbox = Outbox()
        # built in dependency order, each complete: the pool hands every job's turn its handle
        self.control = Control(config, store, self.outbox, track=self._track)
        self.dispatcher = Dispatcher(
            config, store, runner, self.outbox, self.control, on_done=self._forget_done
        )
        self.consumer = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.pool = WorkerPool(
            store, self.dispatcher.handle, self.consumer, config.workers, config.stale_claim_seconds
        )
        self.upkeep = Upkeep(config, store, runner, self.consumer)
        self._allowed = partial(allowed, config)  # the platforms' allow-lists
        self.votes = FeedbackVotes(config, store, self._in_background, self._allowed)
        # a platform's last delivery the store could not take, kept on disk (flow/kept.py)
        self.kept = KeptJobs(spool_path(config.data_dir, config.bot_id), store, self._track)
        self.submit_feedback = self.votes.submit  # GatewayPort: 👍/👎 under answers (flow/feedback.py)
        self.withdraw = Recalls(store, config).withdraw  # GatewayPort: a message recalled (flow/recalls.py)
        self.stop_run = self.control.stops.stop_own  # GatewayPort: a run stopped there (flow/stops.py)
        self.member_left = Departures(store, self.control.close_question).member_left  # flow/departures.py
        self._accepted: BoundedDict[str, None] = BoundedDict(MAX_TRACKED)  # ids not yet done (``drain``)
        self._background: set[asyncio.Task[Any]] = set()
        # token -> (when, record) read by ``pending_by_token``: the click that follows reuses it
        self._read_recently: dict[str, tuple[float, PendingRecord]] = {}
        self.runs_jobs = True  # False when started with ``jobs=False``: this process takes messages in

    @property
    def adapters(self) -> list[PlatformAdapter]:
        """The registered adapters."""
        return self.outbox.adapters

    def register(self, adapter: PlatformAdapter) -> None:
        """Add a platform adapter (before ``start``)."""
        self.outbox.register(adapter)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self, workers: int | None = None, *, jobs: bool = True, receive: bool = True) -> None:
        """Build the agent (when the runner has a ``start``), start the adapters and the workers.

        ``jobs=False`` (``serve``'s web side): the adapters only, which take messages in and
        enqueue them; the agent is not built and jobs are left to the worker processes.
        ``receive=False`` (a worker process): the adapters send only; their receivers (Socket
        Mode, long connection, polling, webhook registration) run where messages are taken in.
        """
        if jobs:
            await self.runner.start()
        for adapter in self.adapters:
            await adapter.start()
            if receive:
                await adapter.start_receiving()
        if receive:  # where messages are taken in: the jobs kept there are queued from there
            self.kept.start()
        self.runs_jobs = jobs
        if not jobs:
            log.info("gateway started without workers (jobs run elsewhere), consumer %s", self.consumer)
            return
        self.pool.start(workers)
        self.upkeep.start()
        log.info("gateway started: %d worker(s), consumer %s", self.pool.workers, self.consumer)

    async def drain(
        self,
        timeout: float = 10.0,  # noqa: ASYNC109 (the documented surface)
        *,
        inbound_ids: Iterable[str] = (),
    ) -> None:
        """Wait until every job accepted here (and ``inbound_ids`` accepted elsewhere) is done.

        Raises ``TimeoutError`` naming the open jobs.
        """
        for inbound_id in inbound_ids:
            self._track(inbound_id)
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            if self._background:
                await asyncio.wait(set(self._background), timeout=max(deadline - time.monotonic(), 0))
            for inbound_id in list(self._accepted):
                if await self.store.is_done(inbound_id):
                    self._accepted.pop(inbound_id, None)
            if not self._accepted and not self._background:
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"jobs still open after {timeout}s: {list(self._accepted)}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.1)

    async def stop(self, grace: float | None = None) -> None:
        """Stop taking work; running jobs get ``grace`` seconds, the rest go back to the stream."""
        grace = self.config.shutdown_grace_seconds if grace is None else grace
        await self.upkeep.stop()
        await self.kept.stop()
        await self.pool.stop(grace)
        for task in list(self._background):
            task.cancel()
        for adapter in self.adapters:
            try:
                await adapter.stop()
            except Exception:
                log.warning("stopping the %s adapter failed", adapter.platform, exc_info=True)
        log.info("gateway stopped")

    # --- GatewayPort: messages ----------------------------------------------------------------

    async def accept(self, message: InboundMessage) -> AcceptOutcome:
        """Dedupe and durably enqueue a message (one store call); the reply follows via ``send``."""
        conv = message.conversation
        metrics.inbound_events(conv.platform, "message").inc()
        if not self._allowed(conv, message.sender):
            if not (message.only_in_known_thread or message.said_to_others):  # maybe not the bot's: no word
                self._in_background(
                    refuse_once(self.config, self.store, self.outbox, conv, message.sender, message.text)
                )
            return AcceptOutcome.REFUSED
        if not message.text.strip() and not message.attachments:
            return AcceptOutcome.IGNORED
        inbound_id = message.inbound_id
        # commands other than /new answer at once, in the chat thread's control lane (commands.py)
        command = parse_command(message.text)
        out_of_turn = command is not None and not command.in_turn
        fresh = await self.kept.accept(
            message.last_delivery,
            conv.platform,
            dedupe_key=inbound_id,
            kind="command" if out_of_turn else "message",
            inbound_id=inbound_id,
            order_key=conv.thread_key + CONTROL_LANE if out_of_turn else conv.thread_key,
            payload=MessageJob(message=message).model_dump_json(),
            seen_ttl=self.config.seen_ttl_seconds,
        )
        with log_context(platform=conv.platform, chat=conv.chat_id, inbound_id=inbound_id):
            if fresh is None:  # kept on disk: queued (and deduplicated) once the store answers
                return AcceptOutcome.ACCEPTED
            if not fresh:
                metrics.duplicates_dropped(conv.platform).inc()
                log.info("received event %s again: duplicate dropped", message.event_id)
                return AcceptOutcome.DUPLICATE
            log.info("received event %s: queued", message.event_id)
        self._track(inbound_id)
        return AcceptOutcome.ACCEPTED

    async def knows_conversation(self, conversation: Conversation) -> bool:
        """True when this chat thread has an agent thread, or a job accepted for it still waits."""
        return await self.store.has_thread_or_jobs(conversation.thread_key)

    def _track(self, inbound_id: str) -> None:
        self._accepted[inbound_id] = None  # bounded: jobs finished by other replicas are never seen here

    def _forget_done(self, inbound_id: str) -> None:
        self._accepted.pop(inbound_id, None)

    def _in_background(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
