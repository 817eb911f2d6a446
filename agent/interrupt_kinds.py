"""What an interrupt's request id says is pending, and the answer that asks again.

``interrupt:<id>``, ``approval:<id>``, ``approval-edit:<id>``, ``approval-respond:<id>`` (``<id>`` is
the interrupt's id): a later run reads which question an answer is for, and how to resume.
"""

from __future__ import annotations

from dataclasses import dataclass

from clarigate.agent.protocol import HumanInputRequest
from clarigate.agent.protocol.models import Locale

INTERRUPT, APPROVAL, APPROVAL_EDIT, APPROVAL_RESPOND = (
    "interrupt",
    "approval",
    "approval-edit",
    "approval-respond",
)
KINDS = (APPROVAL_RESPOND, APPROVAL_EDIT, APPROVAL, INTERRUPT)  # longest prefix first


@dataclass(frozen=True)
class AskAgain:
    """The answer does not resume the run yet: show this request instead (Edit → the form, an
    answer the schema rejects → the form again with the error)."""

    request: HumanInputRequest


def request_id_for(kind: str, interrupt_id: str) -> str:
    """``approval:<id>`` and the like."""
    return f"{kind}:{interrupt_id}"


def parse_request_id(request_id: str) -> tuple[str, str] | None:
    """``(kind, interrupt id)`` for an interrupt's request id, None for anything else."""
    for kind in KINDS:
        if request_id.startswith(kind + ":"):
            return kind, request_id[len(kind) + 1 :]
    return None


def as_kind(
    request: HumanInputRequest, kind: str, interrupt_id: str, source: str, locale: Locale | None = None
) -> HumanInputRequest:
    """``request`` named for interrupt ``interrupt_id`` (its id, source and, when given, locale)."""
    update: dict[str, object] = {"request_id": request_id_for(kind, interrupt_id), "source": source}
    if locale is not None:
        update["locale"] = locale
    return request.model_copy(update=update)
