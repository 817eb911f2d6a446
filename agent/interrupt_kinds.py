"""What an interrupt's request id says is pending, and the answer that asks again.

``interrupt:<id>``, ``approval:<id>``, ``approval-edit:<id>``, ``approval-respond:<id>`` (``<id>`` is
the interrupt's id): a later run reads which question an answer is for, and how to resume. The
same question asked again (an answer that did not fit) ends in ``#<n>``: an id of its own, so its
answer is a new answer, not a repeat of the one before. A dismissed question the graph cannot take
the dismissal of is closed, never asked again (``Dismissed``); an approval no decision can turn
down is turned down all the same, its calls answered without resuming it (``NotApproved``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from clarigate.agent.protocol import HumanInputRequest, render_text_fallback
from clarigate.agent.protocol.models import Locale
from clarigate.agent.turn_output import TurnOutput

INTERRUPT, APPROVAL, APPROVAL_EDIT, APPROVAL_RESPOND = (
    "interrupt",
    "approval",
    "approval-edit",
    "approval-respond",
)
KINDS = (APPROVAL_RESPOND, APPROVAL_EDIT, APPROVAL, INTERRUPT)  # longest prefix first
_AGAIN = re.compile(r"#(\d+)$")


@dataclass(frozen=True)
class Asked:
    """A question as the person gets it: its ``request``, and ``in_full``, what the request could
    not hold (its strings hold 200 characters), in full, as Markdown to show right above it
    (``clarigate.agent.shown_above``); None when the request holds it all."""

    request: HumanInputRequest
    in_full: str | None = None

    def output(self) -> TurnOutput:
        """A turn's output asking this question (and nothing else)."""
        return asking(TurnOutput(), self)


@dataclass(frozen=True)
class AskAgain(Asked):
    """The answer does not resume the run yet: show this request instead (Edit → the form, an
    answer the schema rejects → the form again with the error)."""


def asking(output: TurnOutput, asked: Asked) -> TurnOutput:
    """``output`` asking ``asked``: its text in full, when there is one, as the last reply, right
    before the question (every platform delivers a turn's replies, then its question)."""
    replies = [*output.replies, asked.in_full] if asked.in_full else output.replies
    return replace(
        output,
        replies=replies,
        request=asked.request,
        fallback_text=render_text_fallback(asked.request),
        shown_above=asked.in_full or None,
    )


@dataclass(frozen=True)
class NotApproved:
    """The calls of an approval whose review allows neither ``reject`` nor ``respond`` (approve
    and edit only), turned down (Cancel, ``/cancel``, a new message): no decision the middleware
    takes stands for that, so it is not resumed. Each call gets ``message`` as its result instead,
    as its step's own output, and the run goes on without the tool (``clarigate.agent.not_approved``).
    Here, not there, so that the runners can see it without the agent's libraries."""

    message: str


@dataclass(frozen=True)
class Dismissed:
    """The person dismissed the question (Cancel, ``/cancel``) and the graph refused the declined
    answer (its ``response_schema``): the question is closed as any dismissed one, never asked
    again; the interrupt stays pending, and the next message runs over it (``supersede``)."""


def asking_first(output: TurnOutput, result: Any, messages: Sequence[Any]) -> TurnOutput:
    """``output`` asking the first pending interrupt's request, when the run (its final state
    ``result``, the thread's ``messages``) stopped on one (``asking``)."""
    from clarigate.agent.interrupts import asked_for
    from clarigate.agent.models.conversation import thread_locale

    interrupts = result.get("__interrupt__") if isinstance(result, Mapping) else None
    if not interrupts or output.request is not None:
        return output
    first = interrupts[0]
    return asking(output, asked_for(first.id, first.value, thread_locale(messages), first.response_schema))


def request_id_for(kind: str, interrupt_id: str) -> str:
    """``approval:<id>`` and the like."""
    return f"{kind}:{interrupt_id}"


def parse_request_id(request_id: str) -> tuple[str, str] | None:
    """``(kind, interrupt id)`` for an interrupt's request id, None for anything else."""
    request_id = _AGAIN.sub("", request_id)
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


def asked_again(request: HumanInputRequest, answered_id: str) -> HumanInputRequest:
    """``request`` asked after the answer to ``answered_id``: when it is that same question again,
    with an id of its own (``#2`` after ``#1``)."""
    base = _AGAIN.sub("", request.request_id)
    if base != _AGAIN.sub("", answered_id):
        return request  # another question (Edit's form, Reply instead's message): its own id already
    match = _AGAIN.search(answered_id)
    attempt = int(match.group(1)) + 1 if match else 1
    return request.model_copy(update={"request_id": f"{base}#{attempt}"})
