"""Claiming a question's answer, however the question closes.

A tap, a form, a typed answer, a Cancel, ``/cancel``, ``/new`` or a new message written instead:
each closes the question by claiming it (``Store.claim_answer``: once, for everyone), and each
claims it here. What was kept only while the question was open goes with it: the lines people
typed towards its form (``TypedDrafts.forget``), which would else stay in the store until the
question's time ran out.

An answer to an approval (a graph's interrupt) is noted for its chat thread
(``answer_due_key``): a message queued there before the click waits behind that answer's
job (``Dispatcher``), since a request run on the thread first would end the interrupt
with a rejection and the answer the person was shown as accepted would never take effect.

An answer's time is noted for its agent thread by the claim itself (``answered_key``): a typed
answer to that question written while it was still open and handled after it (someone else
answered first) is told so, as a second tap is, rather than run as a request (``TypedAnswers``).

A question the chat refused (the bot removed or blocked: ``DeliveryFailed.chat_refused``) was
never seen: it closes as if a new message had superseded it (``close_unseen``), so a line written
there later runs as a request, never as the answer to a question nobody was shown (a graph's
interrupt is resumed with the rejection before that request, as for any new message).
"""

from __future__ import annotations

import logging

from clarigate.agent.interrupt_kinds import parse_request_id
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, answer_declined
from clarigate.gateway.boundary.messages import Sender
from clarigate.gateway.flow.typed_drafts import TypedDrafts
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import ORDER_TTL_SECONDS
from clarigate.gateway.store.records import ClaimResult, Payload

log = logging.getLogger(__name__)


async def claim_answer(
    store: Store,
    request_id: str,
    answered_by: Sender,
    response: HumanInputResponse,
    followup: tuple[str, str, Payload] | None = None,
    *,
    seen: tuple[str, int] | None = None,
    current_in: str | None = None,
) -> ClaimResult:
    """``store.claim_answer`` (the same arguments, the same result); once the question is claimed,
    every person's typed form drafts of it are deleted. Their deletion failing leaves the claim
    as it is: the drafts expire with the question."""
    claim = await store.claim_answer(
        request_id, answered_by, response, followup, seen=seen, current_in=current_in
    )
    if claim.status == "claimed" and claim.record is not None:
        try:
            await TypedDrafts(store).forget(claim.record)
        except Exception as exc:  # noqa: BLE001 (the question is closed all the same)
            log.warning("deleting the typed form drafts of %s failed: %s", request_id, exc)
        if followup is not None and parse_request_id(request_id) is not None:
            await _note_answer_due(store, followup[1], followup[0])
    return claim


async def close_unseen(store: Store, request: HumanInputRequest) -> None:
    """Close ``request``'s question, which its chat refused to show: declined as superseded (by
    whatever is written there next), with no run and no message to update. One answered or
    closed meanwhile stays as it is."""
    record = await store.get_pending(request.request_id)
    if record is None or record.status != "pending":
        return
    response = answer_declined(record.request, None, "superseded")
    by = record.asked_by or Sender(user_id="")
    claim = await claim_answer(store, request.request_id, by, response)
    if claim.status == "claimed":
        log.info("closed clarification %s: its chat refused it, nobody saw it", request.request_id)


def answer_due_key(order_key: str) -> str:
    """The store key naming the last approval answer job queued in ``order_key``'s chat thread."""
    return f"answer-due:{order_key}"


async def _note_answer_due(store: Store, order_key: str, inbound_id: str) -> None:
    """Note the approval's answer job for its thread; failing, the claim stands as it is."""
    try:
        await store.set_json(answer_due_key(order_key), inbound_id, ORDER_TTL_SECONDS)
    except Exception as exc:  # noqa: BLE001 (the answer runs all the same, in its turn)
        log.warning("noting answer job %s for its thread failed: %s", inbound_id, exc)
