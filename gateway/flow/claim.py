"""Claiming a question's answer, however the question closes.

A tap, a form, a typed answer, a Cancel, ``/cancel``, ``/new`` or a new message written instead:
each closes the question by claiming it (``Store.claim_answer``: once, for everyone), and each
claims it here. What was kept only while the question was open goes with it: the lines people
typed towards its form (``TypedDrafts.forget``), which would else stay in the store until the
question's time ran out.
"""

from __future__ import annotations

import logging

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import Sender
from clarigate.gateway.flow.typed_drafts import TypedDrafts
from clarigate.gateway.store.base import ClaimResult, Payload, Store

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
    return claim
