"""Withdrawing waiting messages: ``/cancel`` with no question open and no run of the person's.

A message waiting its turn (behind a run of its chat thread) or kept while the agent is away
(``AgentRun._agent_unavailable``: tried again for up to an hour) is not running yet, so there is
no run to stop. Its writer's ``/cancel`` withdraws it instead: each of the thread's message jobs
still waiting (``Store.waiting_jobs``, read only on ``/cancel``, never per message) that the
person wrote before the ``/cancel`` is marked as a recalled message is (``recalls.recalled_key``),
and is dropped without a word when its turn comes (``Dispatcher._recorded``). The person reads one
line. In a group only the person's own messages are withdrawn, unless ``answer_policy`` is
``anyone`` (as for stopping a run, ``flow.stops``). A run going on is stopped, not withdrawn: a
message whose run began (here or in another process) is never withdrawn, nor a remark said to
other people (``InboundMessage.said_to_others``: never answered anyway), nor a command waiting its
turn (``/new``: commands always work). Its run and its withdrawal
take the same one-time claim (``recalls.fate_lease``, one store step each: ``due_and_recalled`` as
the run begins), so a message claimed by a worker at the moment of the ``/cancel`` either runs (the
person is told it is being worked on) or is withdrawn and never runs. A message waiting, its
thread's oldest too, is withdrawn; one handed back because the agent is away waits again
(``recalls.waiting_again``). The jobs a process said it runs, or ran a moment ago
(``flow.stops``), are left out before any claim.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection

from clarigate.agent.protocol.coerce import cut, one_line
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import InboundMessage, MessageJob
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.flow.notices import notice
from clarigate.gateway.flow.recalls import WITHDRAWN, fate_lease, recalled_key
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import DONE_TTL_SECONDS
from clarigate.gateway.store.records import Job

log = logging.getLogger(__name__)

#: How many stream entries a ``/cancel`` reads at most to find its thread's waiting messages.
WAITING_SCAN = 1000
#: How long a withdrawal is remembered (seconds): as long as a done marker, far longer than a
#: message waits for its run (``recalls.recall_ttl``: its agent away, then the run).
WITHDRAWN_TTL = DONE_TTL_SECONDS
#: How much of a withdrawn message the line quotes.
QUOTE_CHARS = 120


async def withdraw_waiting(
    store: Store, msg: InboundMessage, locale: Locale, policy: str, running: Collection[str] = ()
) -> TextReply | None:
    """Withdraw the waiting messages of ``msg``'s chat thread that ``msg``'s sender may withdraw
    (their own, or any with ``policy`` ``anyone``) and wrote before it, not the jobs ``running``
    (entry ids); the line saying so, or None when there was none (or the store could not say)."""
    try:
        jobs = await store.waiting_jobs(msg.conversation.thread_key, WAITING_SCAN)
    except Exception as exc:  # noqa: BLE001 (nothing withdrawn: the person is told as before)
        log.warning("reading the waiting messages of a /cancel failed (%s)", exc)
        return None
    chosen = []
    for job, text in _withdrawable([job for job in jobs if job.entry_id not in running], msg, policy):
        if await _withdraw(store, job):
            chosen.append((job, text))
            log.info("message %s withdrawn by %s (/cancel)", job.inbound_id, msg.sender.user_id)
    if not chosen:
        return None
    if len(chosen) == 1:
        return TextReply(text=notice("withdrawn_one", locale, text=cut(one_line(chosen[0][1]), QUOTE_CHARS)))
    return TextReply(text=notice("withdrawn_many", locale, count=str(len(chosen))))


async def _withdraw(store: Store, job: Job) -> bool:
    """Withdraw ``job`` unless its run began (``recalls.fate_lease``, one store step): True when
    it is withdrawn and never runs. Marked recalled too, for a worker of an older release."""
    try:
        if not await store.acquire_lease(fate_lease(job.inbound_id), WITHDRAWN, WITHDRAWN_TTL):
            return False  # its run began (or is beginning): the stop path's, not withdrawn
    except Exception as exc:  # noqa: BLE001 (not withdrawn: it runs)
        log.warning("withdrawing message %s failed (%s)", job.inbound_id, exc)
        return False
    with contextlib.suppress(Exception):  # (the lease decides: withdrawn all the same)
        await store.set_json(recalled_key(job.inbound_id), 1, WITHDRAWN_TTL)
    return True


def _withdrawable(jobs: list[Job], msg: InboundMessage, policy: str) -> list[tuple[Job, str]]:
    """The message jobs among ``jobs`` that ``msg`` withdraws, each with its text: never a bare
    command waiting its turn (``/new``, ``Command.in_turn``): commands always work. One carrying a
    request (``/new drop the tables``, or a photo) is withdrawn whole, the request with it."""
    from clarigate.gateway.flow.commands import parse_command  # commands imports this module (stops)

    found = []
    for job in jobs:
        if job.kind != "message":
            continue
        waiting = MessageJob.model_validate_json(job.payload_json).message
        command = parse_command(waiting.text)
        if command is not None and not (command.words.strip() or waiting.attachments):
            continue  # a bare command in its turn (/new): not a request, it runs
        if waiting.received_at > msg.received_at:
            continue  # sent after the /cancel: not the one it meant
        if waiting.said_to_others:
            continue  # a remark to other people: never answered, nothing to withdraw
        if policy != "anyone" and waiting.sender.user_id != msg.sender.user_id:
            continue
        found.append((job, waiting.text))
    return found
