"""A stop asked of the other processes through the store's stop channel (``flow.stops``): their
answers, and who answers the ``/cancel`` when its holder's answer comes late or never.

The process running the thread's job may not hear a ``/cancel`` in time: its subscription is still
being made (its first run) or made again (a lost connection), or it answers after
``STOP_REPLY_WAIT``. The ``/cancel`` is then answered without it, and the stop, kept for it
(``Store.publish_stop(…, keep=True)``), reaches it later. So the ``/cancel``'s answer and a run's
stop take the same one-time mark (``claim_stop``): whichever comes first has it, the other does
nothing, and the person never reads a "stopped" line after being told there was nothing to stop.
A holder whose run ended as it took the mark says so (``claimed``): the ``/cancel`` answers then.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from clarigate.gateway.store.base import Store

log = logging.getLogger(__name__)

#: Verdicts of a process holding the thread's run: they outweigh "lately" (no run there, one
#: stopped there a moment ago) and "none". Each has ``jobs``: the entry ids of the thread's jobs
#: never withdrawn (``flow.withdrawals``): the job running there, or whose run ended there a moment
#: ago (its answer on its way).
HELD = ("stopping", "stopped", "refused", "going")

#: How long a stop's one-time mark is kept (seconds): longer than the stop is kept for a process
#: subscribing again (``redis_stops.STOPS_KEPT``) and its margin.
CLAIM_KEPT = 300


@dataclass
class Asked:
    """The answers to a stop asked of the other processes (``RunStops._ask_elsewhere``)."""

    answers: list[dict[str, Any]]  # this process's own verdict first
    expected: int | None = None  # how many answer (all listening, this one counted), once known
    heard: asyncio.Event = field(default_factory=asyncio.Event)
    answering: set[str] = field(default_factory=set)  # the processes that answered (``from``)

    def add(self, answer: dict[str, Any]) -> None:
        """One process's answer; a second one of the same process (a stop it heard twice) does
        not count: the holder's answer is waited for until every process answered."""
        sender = answer.get("from")
        if isinstance(sender, str):
            if sender in self.answering:
                return
            self.answering.add(sender)
        self.answers.append(answer)
        self.expect(self.expected)

    def expect(self, count: int | None) -> None:
        self.expected = count
        held = any(answer.get("verdict") in HELD or answer.get("claimed") for answer in self.answers)
        if held or (count is not None and len(self.answers) >= count):
            self.heard.set()

    def verdict(self) -> dict[str, Any]:
        """The holder's verdict; else "lately" when a process stopped a run a moment ago, or
        "none", with every process's ``jobs`` (``claimed``: a holder took the stop's mark, its run
        ending meanwhile: the ``/cancel`` answers, ``RunStops._answer``)."""
        for answer in self.answers:
            if answer.get("verdict") in HELD:
                return answer
        lately = any(answer.get("verdict") == "lately" for answer in self.answers)
        jobs = [str(job) for answer in self.answers for job in answer.get("jobs", [])]
        merged = {"verdict": "lately" if lately else "none", "jobs": jobs}
        return merged | ({"claimed": True} if any(answer.get("claimed") for answer in self.answers) else {})


async def claim_stop(store: Store, ask: str, unreadable: bool) -> bool:
    """True for the first to claim the stop ``ask`` (its nonce): the ``/cancel`` answering without
    its holder, or the holder stopping its run; ``unreadable`` when the store cannot say."""
    try:
        return await store.first_time(f"stop-claim:{ask}", CLAIM_KEPT)
    except Exception as exc:  # noqa: BLE001 (Redis away: the caller's safe side)
        log.info("the stop %s could not be claimed (%s)", ask, type(exc).__name__)
        return unreadable
