"""What a job's turn gets from the worker pool that holds it: the job, the hold, the run slot.

The pool makes one ``JobHandle`` per job it holds and hands it to the turn; the turn asks the
handle, never the pool, so the flow runs one way: pool -> turn. The turn tells the pool to leave
a job in the stream by raising ``HandBack``, and to leave it to another replica by raising
``Declined`` (this one lacks the job's platform).
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Any

from clarigate.gateway.store.records import Job

log = logging.getLogger(__name__)


class HandBack(Exception):
    """The job failed before its outputs were recorded; leave it in the stream to be retried."""


class Declined(HandBack):
    """This replica has no adapter for the job's platform: another replica that has it runs it.

    ``budget``: seconds after its acceptance that the job is left to others; past them the
    replica that holds it ends it (no replica has the platform).
    """

    def __init__(self, platform: str, budget: float) -> None:
        super().__init__(platform)
        self.platform = platform
        self.budget = budget


def platform_of(job: Job) -> str:
    """The platform a job's replies go to: the first part of its order key (its chat thread)."""
    return job.order_key.split(":", 1)[0]


def accepted_at(job: Job) -> float:
    """When the job was accepted (unix time): its stream entry id is its time in ms."""
    try:
        return int(job.entry_id.split("-")[0]) / 1000
    except ValueError:
        return 0.0


def decline_within(job: Job, budget: float) -> None:
    """``Declined`` while ``job`` is younger than ``budget`` seconds (left to other replicas)."""
    if time.time() < accepted_at(job) + budget:
        raise Declined(platform_of(job), budget)


def lacked(job: Job, budget: float) -> None:
    """This replica has no adapter for ``job``'s platform: ``Declined`` within ``budget`` seconds
    of its acceptance; past them it is given up here, at ERROR (the caller completes it)."""
    platform = platform_of(job)
    decline_within(job, budget)
    log.error(
        "delivery abandoned: job %s for platform %r: no replica has platform %r "
        "(left to other replicas for delivery_budget_seconds, %.0f s)",
        job.inbound_id,
        platform,
        platform,
        budget,
    )


class JobHandle(ABC):
    """One job held by this replica, as its turn sees it."""

    def __init__(self, job: Job, unproven: bool = False) -> None:
        self.job = job
        #: The store cannot prove what this job sent: it was taken over (delivered before), or
        #: accepted before a store outage and read soon after it (a Redis restart may have lost
        #: its read and its notes). Its items are looked for on the platform before they are sent.
        self.unproven = unproven or job.deliveries > 1
        #: The job's one "your message is kept" notice for a store outage, once made.
        self.kept: Any = None

    @abstractmethod
    async def still_held(self) -> bool:
        """True while this replica may still send for the job (asked before every send).

        False once another worker took the job over, or it was answered already.
        """

    @abstractmethod
    def run_slot(self) -> AbstractAsyncContextManager[None]:
        """One of the replica's run slots, held around an agent run (not around delivery)."""
