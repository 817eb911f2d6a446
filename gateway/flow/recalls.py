"""Messages their writers took back before the bot ran them: Feishu's recall (撤回), Slack's deletion.

The adapter reports the recall (``GatewayPort.withdraw``) with the message's ``event_id``; the core
marks its inbound id for as long as a message may wait for its run (``recall_ttl``). A message job
about to run reads the mark in the same store read as its thread's approval answer
(``claim.answer_due_key``, one ``MGET``): marked, it is dropped without a word and completed, so
the thread's next message runs in its turn. A recall once the run has started changes nothing
there: the reply goes where the platform still allows it (Feishu: in the chat when the recalled
message cannot be replied to).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from clarigate.gateway.flow.claim import answer_due_key
from clarigate.gateway.flow.outage import MAX_UNAVAILABLE_DELIVERIES
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import DONE_TTL_SECONDS
from clarigate.gateway.store.records import Job

log = logging.getLogger(__name__)

#: How long a recall is remembered at least: far longer than a message waits for its run.
RECALL_TTL_SECONDS = 3600
#: The holders of a message's ``fate_lease``: its run began, or its writer withdrew it.
RUNS, WITHDRAWN = "runs", "withdrawn"


def recall_ttl(config: GatewayConfig) -> int:
    """How long a recall is remembered (seconds): at least as long as a message may wait for its
    run, its agent away (``MAX_UNAVAILABLE_DELIVERIES`` tries ``stale_claim_seconds`` apart), then
    the run itself (``run_timeout_seconds``)."""
    away = config.stale_claim_seconds * MAX_UNAVAILABLE_DELIVERIES + config.run_timeout_seconds
    return max(RECALL_TTL_SECONDS, math.ceil(away))


def fate_lease(inbound_id: str) -> str:
    """The store lease deciding once whether the message behind ``inbound_id`` runs (held by
    ``RUNS``, taken as its run begins) or is withdrawn (``WITHDRAWN``, ``flow.withdrawals``)."""
    return f"fate:{inbound_id}"


def recalled_key(inbound_id: str) -> str:
    """The store key marking the message behind ``inbound_id`` as recalled by its writer."""
    return f"recalled:{inbound_id}"


class Recalls:
    """Notes the recalls adapters report (``GatewayPort.withdraw``)."""

    def __init__(self, store: Store, config: GatewayConfig) -> None:
        self.store = store
        self.ttl = recall_ttl(config)

    async def withdraw(self, platform: str, event_id: str) -> None:
        """Mark the message ``event_id`` (as its ``InboundMessage`` has it) recalled: its job, if it
        has not run yet, is dropped. Best effort: the store unreachable, the message runs."""
        inbound_id = f"{platform}:{event_id}"  # as ``InboundMessage.inbound_id``
        try:
            await self.store.set_json(recalled_key(inbound_id), 1, self.ttl)
        except Exception as exc:  # noqa: BLE001 (the platform would not tell again)
            log.warning("noting the recall of %s failed (%s): it is answered if not yet", inbound_id, exc)
            return
        log.info("message %s was recalled: not run if it has not started", inbound_id)


async def due_and_recalled(store: Store, job: Job) -> tuple[Any, bool]:
    """For a message job: its thread's approval answer job id (or None) and whether its writer
    recalled or withdrew it, in one store step that also takes its ``fate_lease`` for its run (a
    ``/cancel`` withdrawing it at that moment: exactly one of the two has it). Other jobs: (None,
    False), nothing read."""
    if job.kind != "message":
        return None, False
    keys = (answer_due_key(job.order_key), recalled_key(job.inbound_id))
    runs, (answer_id, recalled) = await store.lease_and_read(
        fate_lease(job.inbound_id), RUNS, DONE_TTL_SECONDS, *keys
    )
    if recalled is not None or not runs:
        log.info("message %s was recalled before its run: not run", job.inbound_id)
    return answer_id, recalled is not None or not runs


async def waiting_again(store: Store, job: Job) -> None:
    """``job`` is handed back without having run (its agent away): waiting again, its writer's
    ``/cancel`` may withdraw it (its ``fate_lease`` let go). Best effort: kept, it runs later."""
    if job.kind != "message":
        return
    try:
        await store.release_lease(fate_lease(job.inbound_id), RUNS)
    except Exception as exc:  # noqa: BLE001 (its /cancel then says it is still being worked on)
        log.info("message %s could not be marked as waiting again (%s)", job.inbound_id, exc)
