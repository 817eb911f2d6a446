"""An approval held open: one whose review allows neither reject nor respond
(``HumanInputRequest.dismissible`` False), so no decision can stand for a Cancel or a message
written instead of its answer, and nothing else runs on its thread until it is answered (or the
conversation is left with ``/new``).

What a message or a ``/cancel`` over it is told depends on who wrote it. Whoever may answer it
(its asker; anyone, where anyone may answer) is told to answer it with one of its options. Anyone
else in a shared conversation cannot answer it: they are told, in a note for them only, that only
its asker can, and that nothing goes to the agent there until they do: never told to answer it
(they may not), nor that their own requests still go ahead (they do not).
"""

from __future__ import annotations

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import InboundMessage, Notice, TextReply
from clarigate.gateway.flow.answers import policy_refusal, view_of
from clarigate.gateway.flow.notices import locale_for, notice
from clarigate.gateway.store.base import PendingRecord


def held_reply(record: PendingRecord, msg: InboundMessage, new: str) -> TextReply:
    """The reply to ``msg``, which does not run: ``record`` is an approval held open. ``new``: how
    ``/new`` is typed in the conversation. In the language of the message, else of the approval."""
    locale = locale_for(msg.text, record.request.locale)
    if policy_refusal(record, view_of(record), msg.sender) is None:  # they may answer it
        return TextReply(text=notice("approval_answer_first", locale, new=new))
    note = only_the_asker(record, locale, new)
    return TextReply(text=note.text, private_to=msg.sender, notice=note)


def not_yours(record: PendingRecord, locale: Locale, new: str) -> Notice:
    """What someone else's ``/cancel`` of ``record`` is told: only its asker can cancel it (their
    own requests still go ahead); for an approval held open, ``only_the_asker``."""
    if record.request.dismissible is False:
        return only_the_asker(record, locale, new)
    assert record.asked_by is not None  # someone else's question names who asked
    return Notice.of("cancel_not_yours", locale, who=record.asked_by)


def only_the_asker(record: PendingRecord, locale: Locale, new: str) -> Notice:
    """Only ``record``'s asker can answer this approval held open, and nothing goes to the agent in
    the conversation until they do; ``new`` starts a new one for everyone."""
    assert record.asked_by is not None  # someone else's question names who asked
    return Notice.of("approval_only_asker", locale, {"new": new}, who=record.asked_by)
