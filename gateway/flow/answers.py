"""Checking answers against a pending clarification: who may answer, what the answer is.

Pure functions over the store's ``PendingRecord``; the claim itself (one atomic
store call) happens in the core.
"""

from __future__ import annotations

import time

from clarigate.agent.protocol import (
    AnsweredBy,
    HumanInputResponse,
    answer_declined,
    answer_message_text,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    check_form_values,
    closed_line,
    parse_typed_reply,
    ui_text,
)
from clarigate.agent.protocol.coerce import cut, fold, one_line
from clarigate.agent.protocol.models import HumanInputRequest, Locale, Option
from clarigate.agent.protocol.risk import approval_option
from clarigate.gateway.boundary.messages import (
    AnswerOutcome,
    AnswerStatus,
    InboundAnswer,
    InboundMessage,
    Notice,
    PendingView,
    Sender,
)
from clarigate.gateway.flow.notices import text_locale
from clarigate.gateway.store.records import PendingRecord

#: How much of a person's name the agent is told (a name is what the person chose: kept short).
NAME_CHARS = 80


def view_of(record: PendingRecord, now: float | None = None) -> PendingView:
    """The adapter-facing view of a stored clarification."""
    expired = record.status == "pending" and record.expires_at <= (time.time() if now is None else now)
    return PendingView(
        request=record.request,
        token=record.token,
        conversation=record.conversation,
        message_ref=record.message_ref,
        asked_by=record.asked_by,
        status="expired" if expired else record.status,
        answered_by=record.answered_by,
        response=record.response,
        expires_at=record.expires_at,
    )


def answered_by(platform: str, sender: Sender) -> AnsweredBy:
    """The protocol's ``answered_by`` for a sender on ``platform``."""
    return AnsweredBy(platform=platform, user_id=sender.user_id, display_name=sender.display_name)


def expired_outcome(view: PendingView | None = None, locale: Locale = "en") -> AnswerOutcome:
    """The verdict for an unknown or expired clarification."""
    return AnswerOutcome(status=AnswerStatus.EXPIRED, message=ui_text("expired", locale), view=view)


def restarted_outcome(view: PendingView) -> AnswerOutcome:
    """The verdict for a clarification of a conversation restarted since (``/new``)."""
    message = ui_text("late_restarted", view.request.locale)
    return AnswerOutcome(status=AnswerStatus.EXPIRED, message=message, view=view)


def already_answered_outcome(view: PendingView, sender: Sender | None = None) -> AnswerOutcome:
    """The verdict for a clarification someone already answered (or cancelled, or closed); to
    ``sender`` (a second tap), when it was them, that they did."""
    response, by, locale = view.response, view.answered_by, view.request.locale
    declined = response is not None and response.response_kind == "declined"
    key = f"late_{response.reason or 'cancelled'}" if response is not None and declined else ""
    yours = by is not None and sender is not None and by.user_id == sender.user_id
    key = key or ("already_answered_you" if yours else "already_answered")
    if by is None and "{who}" in ui_text(key):  # no one to name: the line that names no one
        key = "question_closed"
    notice = Notice.of(key, locale, who=by) if by else Notice.of(key, locale)
    return AnswerOutcome(
        status=AnswerStatus.ALREADY_ANSWERED,
        message=notice.text,
        notice=notice,
        view=view,
        answered_line=answered_line(view) if view.response else "",
    )


def refusal_for(view: PendingView, sender: Sender) -> AnswerOutcome | None:
    """None if ``sender`` may answer ``view`` now, else the refusal (status, expiry, who asked)."""
    if view.status == "expired":
        return expired_outcome(view, view.request.locale)
    if view.status == "answered":
        return already_answered_outcome(view, sender)
    return None


def policy_refusal(record: PendingRecord, view: PendingView, sender: Sender) -> AnswerOutcome | None:
    """None when the record's answer policy lets ``sender`` answer, else NOT_ALLOWED."""
    if record.policy == "anyone" or record.asked_by is None or record.asked_by.user_id == sender.user_id:
        return None
    notice = Notice.of("not_allowed", record.request.locale, who=record.asked_by)
    return AnswerOutcome(status=AnswerStatus.NOT_ALLOWED, message=notice.text, notice=notice, view=view)


def response_for(
    record: PendingRecord, answer: InboundAnswer, platform: str
) -> tuple[HumanInputResponse | None, AnswerOutcome | None]:
    """Build the structured answer from a click, a form submit or text typed in an "Other…" box
    (an option it names exactly, by label or value, is that option; any other text is text).
    A go-ahead pick is held back for its confirmation by ``confirm.answer_for``, which calls this.

    Returns ``(response, None)`` when valid, or ``(None, INVALID outcome)`` with per-field errors.
    """
    request = record.request
    by = answered_by(platform, answer.sender)
    locale = request.locale
    invalid = AnswerStatus.INVALID
    if answer.decline:
        return answer_declined(request, by, "cancelled"), None
    if answer.option_id is not None:
        try:
            return answer_with_option(request, answer.option_id, by), None
        except ValueError:
            return None, AnswerOutcome(
                status=invalid, message=ui_text("invalid_values", locale), view=view_of(record)
            )
    if answer.values is not None:
        if request.input_mode != "form":  # a forged or stale payload: this question has no form
            return None, AnswerOutcome(
                status=invalid, message=ui_text("invalid_values", locale), view=view_of(record)
            )
        check = check_form_values(request, answer.values)
        if not check.ok:
            message = ui_text("invalid_values", locale)
            return None, AnswerOutcome(
                status=invalid, message=message, errors=check.errors, view=view_of(record)
            )
        return answer_with_form(request, check.values, by), None
    text = (answer.text or "").strip()
    if not text:
        return None, AnswerOutcome(
            status=invalid, message=ui_text("type_answer", locale), view=view_of(record)
        )
    return _typed_in_box(record, text, by)


def _typed_in_box(
    record: PendingRecord, text: str, by: AnsweredBy
) -> tuple[HumanInputResponse | None, AnswerOutcome | None]:
    """Text typed in an "Other…" box (or a form's lines): an option it names exactly is that option."""
    request = record.request
    if request.input_mode == "form":
        typed = parse_typed_reply(request, text, by)
        if typed.response is None:
            message = "\n".join(typed.problems) or ui_text("invalid_values", request.locale)
            return None, AnswerOutcome(status=AnswerStatus.INVALID, message=message, view=view_of(record))
        return typed.response, None
    return other_answer(request, text, by), None


def other_answer(request: HumanInputRequest, text: str, by: AnsweredBy) -> HumanInputResponse:
    """The answer ``text`` gives once its writer chose "Other…" (typed in the box, or in the chat
    after it): the option it names exactly, else the text itself."""
    named = _named_option(request, text)
    return answer_with_text(request, text, by) if named is None else answer_with_option(request, named.id, by)


def _named_option(request: HumanInputRequest, text: str) -> Option | None:
    """The option whose label or value ``text`` is (case and width aside); not by its number, as
    a typed chat answer may be: "2" written in "Other…" for "How many?" is two, not option 2."""
    key = fold(text)
    named = next((o for o in request.options if key in (fold(o.label), fold(o.value))), None)
    return named or approval_option(request, text)  # "批准" in an English approval's box: Approve


def answered_line(view: PendingView) -> str:
    """ "✅ Answered by X: Y" (or "✖ Cancelled by X", …) for updating the message that showed the request."""
    who = view.answered_by.label if view.answered_by else ""
    if view.response is None:
        return ui_text("answered_by", view.request.locale, who=who, answer="")
    return closed_line(view.request, view.response, who)


def run_text_for(record: PendingRecord, response: HumanInputResponse, locale: Locale | None = None) -> str:
    """The HumanMessage text the next run receives for this answer: in the question's language, or
    in ``locale``, the one the person closed it in (``/取消`` of an English question)."""
    return answer_message_text(record.request, response, locale)


def from_someone_else(record: PendingRecord, sender: Sender, text: str) -> str:
    """The HumanMessage text of a request ``sender`` wrote while ``record``, asked of someone
    else, stays open: a first line says who wrote it and that it is not the question's answer
    (the agent reads it right after its question), in the language of the message, else of the
    question. The asker's own message (or one in a thread anyone may answer) is left as it is."""
    asker = record.asked_by
    if asker is None or not asked_of_someone_else(record, sender):
        return text
    locale = text_locale(text) or record.request.locale
    who, asked = cut(one_line(sender.label), NAME_CHARS), cut(one_line(asker.label), NAME_CHARS)
    note = ui_text("run_from_other", locale, who=who, asker=asked)
    return f"{note}\n\n{text}" if text else note


def asked_of_someone_else(record: PendingRecord, sender: Sender) -> bool:
    """True when ``record`` is someone else's question to ``sender``: asked of another person,
    in a conversation where only its asker may answer it."""
    asker = record.asked_by
    return asker is not None and asker.user_id != sender.user_id and record.policy != "anyone"


def may_type_answer(record: PendingRecord, msg: InboundMessage) -> bool:
    """True when ``msg`` is a typed answer to ``record``: the question is open, asked before the
    message was written, and its author may answer it (a message written while the agent was
    still thinking is more context, not an answer to a question the person had not seen yet)."""
    if record.status != "pending" or record.expires_at <= time.time() or msg.received_at < record.created_at:
        return False
    asker = record.asked_by
    return record.policy == "anyone" or asker is None or asker.user_id == msg.sender.user_id


def typed_answer_key(inbound_id: str) -> str:
    """The store key of the answer a message job claimed by typing, for a later delivery of it."""
    return f"typed-answer:{inbound_id}"
