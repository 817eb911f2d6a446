"""What a job's turn gets from the worker pool that holds it: the job, the hold, the run slot.

The pool makes one ``JobHandle`` per job it holds and hands it to the turn; the turn asks the
handle, never the pool, so the flow runs one way: pool -> turn. The turn tells the pool to leave
a job in the stream by raising ``HandBack``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from typing import Any

from clarigate.gateway.store.base import Job


class HandBack(Exception):
    """The job failed before its outputs were recorded; leave it in the stream to be retried."""


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
