"""A typed pick of a risk confirmation's go-ahead option counts only once the person confirms it.

Buttons ask in the platform's own way (a confirm dialog, a confirm keyboard); a typed answer
asks in words: "2" (or the option's label) for an option that goes ahead
(``clarigate.agent.protocol.risk``) is answered with "Reply “confirm” to go ahead with …", and
only the same person's next "confirm" (确认) answers with that option. Anything else they type
drops the confirmation and leaves the question open: another option's number answers as usual,
another go-ahead option asks again, any other text is told it was not confirmed. A plain yes
("yes", "ok", "是", "好的": ``is_affirmative``) confirms nothing and never runs as a request over
the question: with no pick waiting it picks the one go-ahead option (asked again, as a typed pick
is) or, with several, is asked which one; with a pick waiting it is asked for "confirm" again. A
plain no ("no", "nope", "否", "不用了": ``is_negative``) to such a question, asked to confirm a pick
or not, is its one safe option (``risk.option_roles``), answered at once as that option typed
is; with no safe option, or several, it is read as before (a new request, or the pick dropped).

A risk confirmation asked as a form (``risk.is_risk_form``) has no options, but a typed answer of
it that goes ahead (a ticked checkbox, a select's go-ahead option: ``risk.answer_goes_ahead``) is
a pick all the same: asked first, the form's whole answer kept until "confirm"; a plain yes to a
form of one select field picks its go-ahead option as it would a question's.

Text typed in a platform's "Other…" box is read the same way (``answer_for``): an option's
number or label is that option (``parse_typed_reply``), and a go-ahead one asks first, the box
refusing the answer with the line that asks ("confirm" typed there, or in the chat, confirms it).

What is being confirmed is one small key per question and person in the store
(``confirming:<request id>:<user id>`` -> the option id, or a form's answer, and the attachments
the pick came with, living as long as the question), so it survives a restart, is seen by every
replica, and someone else's "confirm" finds nothing. A photo or file sent with the pick goes with
the confirmed answer (the "confirm" message is the one that runs; a "confirm" typed in the box
gives them to its answer's job); a pick not confirmed takes them nowhere.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clarigate.agent.protocol import (
    AnsweredBy,
    HumanInputRequest,
    HumanInputResponse,
    Option,
    answer_with_form,
    answer_with_option,
    looks_like_answer,
    ui_text,
)
from clarigate.agent.protocol.risk import (
    answer_goes_ahead,
    asks_first,
    go_ahead_ids,
    is_affirmative,
    is_confirm_word,
    is_negative,
    is_risk_form,
    option_roles,
    reads_safe,
)
from clarigate.gateway.boundary.messages import AnswerOutcome, AnswerStatus, Attachment, InboundAnswer, Sender
from clarigate.gateway.flow.answers import answered_by, response_for, view_of
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord


def confirming_key(request_id: str, user_id: str) -> str:
    """The store key holding the option ``user_id`` is asked to confirm for ``request_id``."""
    return f"confirming:{request_id}:{user_id}"


@dataclass(frozen=True)
class Confirmed:
    """A confirmed pick: the answer to claim, and the attachments the pick was sent with."""

    response: HumanInputResponse
    attachments: list[Attachment] = field(default_factory=list)


def _waiting(
    request: HumanInputRequest, kept: Any, by: AnsweredBy
) -> tuple[HumanInputResponse | None, list[Attachment]]:
    """The answer a confirmation key holds for ``by`` (an option of ``request``, or a form's answer
    to it), and the attachments it came with (a bare option id: none); None when it holds none."""
    kept = {"option_id": kept} if isinstance(kept, str) else kept
    if not isinstance(kept, dict):
        return None, []
    picked: HumanInputResponse | None = None
    if isinstance(kept.get("option_id"), str) and request.option_by_id(kept["option_id"]) is not None:
        picked = answer_with_option(request, kept["option_id"], by)
    elif isinstance(kept.get("response"), dict):
        response = HumanInputResponse.model_validate(kept["response"])
        if response.request_id == request.request_id:
            picked = response.model_copy(update={"answered_by": by})
    return picked, as_attachments(kept.get("attachments")) if picked is not None else []


def as_attachments(kept: Any) -> list[Attachment]:
    """Attachments kept in the store as JSON (none when nothing is kept)."""
    return [Attachment.model_validate(a) for a in kept or []]


class TypedConfirm:
    """Asks for, and takes, the typed confirmation of a go-ahead option."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def before_typed(
        self, record: PendingRecord, sender: Sender, text: str, by: AnsweredBy
    ) -> Confirmed | str | None:
        """What ``text`` does to a confirmation ``sender`` was asked for.

        The confirmed answer to claim (with the pick's attachments); or a line to reply with (the
        question stays open); or None when no confirmation is waiting (or the message picks an
        option: it is read as usual).
        """
        request = record.request
        if not asks_first(request):  # most questions: no store trip
            return None
        key = confirming_key(record.request_id, sender.user_id)
        picked, attachments = _waiting(request, await self.store.get_json(key), by)
        plain_yes = is_affirmative(text) and not looks_like_answer(request, text)  # no option's label
        plain_no = _plain_no(request, text, by)  # the one safe option, or None
        if picked is None:
            if is_confirm_word(text) and not looks_like_answer(request, text):
                # someone else's pick, or none: a bare "confirm" answers nothing and closes nothing
                return ui_text("confirm_nothing", request.locale)
            if plain_no is not None:  # a plain "no": the one safe option, answered at once
                return Confirmed(plain_no)
            return await self._affirmed(record, sender, by) if plain_yes else None
        if plain_yes:  # "yes" to "Reply “confirm” …": still that pick, asked again
            return _ask_line(request, picked.value)
        await self.store.delete(key)
        if plain_no is not None:  # "no" to "Reply “confirm” …": the pick dropped, the safe one answers
            return Confirmed(plain_no)
        if is_confirm_word(text):
            return Confirmed(picked, attachments)
        if looks_like_answer(request, text):
            return None
        return ui_text("confirm_dropped", request.locale, option=picked.value)

    async def _affirmed(self, record: PendingRecord, sender: Sender, by: AnsweredBy) -> str | None:
        """A plain "yes" (``is_affirmative``) with no pick waiting: the one go-ahead option picked,
        to be confirmed as a typed pick is; with several, which one (the question stays open).
        None when the question has no go-ahead option to pick (a risk form of several fields)."""
        request = record.request
        choices = _choices(request, safe=False)
        if len(choices) == 1:
            ask = await self.ask_first(record, sender, _picking(request, choices[0], by))
            if ask is not None:
                return ask
        if not choices:
            return None
        listed = request.options or request.fields[0].options
        numbered = [f"{n}. {o.label}" for n, o in enumerate(listed, 1) if o in choices]
        return ui_text("confirm_which", request.locale, options=" / ".join(numbered))

    async def ask_first(
        self,
        record: PendingRecord,
        sender: Sender,
        response: HumanInputResponse,
        attachments: Sequence[Attachment] = (),
    ) -> str | None:
        """When ``response`` picks a go-ahead option: remember it (and the ``attachments`` it was
        sent with) and return the line that asks for the confirmation; None when it may be
        claimed as it is."""
        request = record.request
        if not answer_goes_ahead(request, response):
            return None
        ttl = max(int(record.expires_at - time.time()), 1)
        picked = (
            {"option_id": response.option_id}
            if response.response_kind == "option"
            else {"response": response.model_dump(mode="json")}
        )
        kept = {**picked, "attachments": [a.model_dump(mode="json") for a in attachments]}
        await self.store.set_json(confirming_key(record.request_id, sender.user_id), kept, ttl)
        return _ask_line(request, response.value)


def _choices(request: HumanInputRequest, safe: bool) -> list[Option]:
    """The options a plain yes (a plain no when ``safe``) may mean: a question's go-ahead (safe)
    options, or those of a risk form's one select field (the options of its other fields, or of a
    form of several, are not choices)."""
    if request.options:
        if safe:
            roles = option_roles(request)
            return [o for o in request.options if roles.get(o.id) == "safe"]
        return [o for o in request.options if o.id in go_ahead_ids(request)]
    if is_risk_form(request) and len(request.fields) == 1 and request.fields[0].type == "select":
        return [o for o in request.fields[0].options if reads_safe(o.label) is safe]
    return []


def _plain_no(request: HumanInputRequest, text: str, by: AnsweredBy) -> HumanInputResponse | None:
    """The answer a plain "no" (``is_negative``, no option's label) means: the one safe option
    picked; None for any other text, or when no option, or several, read safe."""
    if not is_negative(text) or looks_like_answer(request, text):
        return None
    safe = _choices(request, safe=True)
    return _picking(request, safe[0], by) if len(safe) == 1 else None


def _picking(request: HumanInputRequest, option: Option, by: AnsweredBy) -> HumanInputResponse:
    """The answer that picks ``option``: of the question, or of its form's one select field."""
    if request.options:
        return answer_with_option(request, option.id, by)
    return answer_with_form(request, {request.fields[0].name: option.value}, by)


def _ask_line(request: HumanInputRequest, option: str) -> str:
    """ "Reply “confirm” to go ahead with “{option}” …", in the question's language."""
    word = ui_text("confirm", request.locale).casefold()
    return ui_text("confirm_typed", request.locale, word=word, option=option)


async def answer_for(
    store: Store, record: PendingRecord, answer: InboundAnswer, platform: str
) -> tuple[HumanInputResponse | None, AnswerOutcome | None, list[Attachment]]:
    """``response_for`` a click, a form, a Cancel or text typed in an "Other…" box; the box's text
    is read as a typed chat answer is (``TypedConfirm``): a go-ahead option it names
    is refused with the line asking for "confirm", and "confirm" there answers with the pick, and
    with the photos and files the pick was sent with (the last item; none for any other answer)."""
    response, invalid = response_for(record, answer, platform)
    if response is None or answer.text is None:
        return response, invalid, []
    confirm, by = TypedConfirm(store), answered_by(platform, answer.sender)
    said = await confirm.before_typed(record, answer.sender, answer.text, by)
    if isinstance(said, Confirmed):  # "confirm" typed in the box: the pick waiting, and its files
        return said.response, None, said.attachments
    said = said or await confirm.ask_first(record, answer.sender, response)
    if said is not None:  # the line asking for "confirm" (or what became of the pick waiting)
        return None, AnswerOutcome(status=AnswerStatus.INVALID, message=said, view=view_of(record)), []
    return response, None, []
