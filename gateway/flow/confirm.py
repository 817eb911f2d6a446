"""A typed pick of a risk confirmation's go-ahead option counts only once the person confirms it.

Buttons ask in the platform's own way (a confirm dialog, a confirm keyboard); a typed answer
asks in words: "2" (or the option's label) for an option that goes ahead
(``clarigate.agent.protocol.risk``) is answered with "Reply “confirm” to go ahead with …", and
only the same person's next "confirm" (确认) answers with that option. Anything else they type
drops the confirmation and leaves the question open: another option's number answers as usual,
another go-ahead option asks again, any other text is told it was not confirmed. A plain yes
("yes", "ok", "是", "好的": ``is_affirmative``) confirms nothing and never runs as a request over
the question: with no pick waiting it picks the one go-ahead option (asked again, as a typed pick
is) or, with several, is asked which one; with a pick waiting it is asked for "confirm" again.

What is being confirmed is one small key per question and person in the store
(``confirming:<request id>:<user id>`` -> the option id and the attachments the pick came with,
living as long as the question), so it survives a restart, is seen by every replica, and someone
else's "confirm" finds nothing. A photo or file sent with the pick goes with the confirmed answer
(the "confirm" message is the one that runs); a pick not confirmed takes them nowhere.
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
    answer_with_option,
    looks_like_answer,
    ui_text,
)
from clarigate.agent.protocol.risk import go_ahead_ids, goes_ahead, is_affirmative, is_confirm_word
from clarigate.gateway.boundary.messages import Attachment, Sender
from clarigate.gateway.store.base import PendingRecord, Store


def confirming_key(request_id: str, user_id: str) -> str:
    """The store key holding the option ``user_id`` is asked to confirm for ``request_id``."""
    return f"confirming:{request_id}:{user_id}"


@dataclass(frozen=True)
class Confirmed:
    """A confirmed pick: the answer to claim, and the attachments the pick was sent with."""

    response: HumanInputResponse
    attachments: list[Attachment] = field(default_factory=list)


def _waiting(kept: Any) -> tuple[str | None, list[Attachment]]:
    """The option id and attachments a confirmation key holds (a bare option id: none)."""
    if isinstance(kept, str):
        return kept, []
    if not isinstance(kept, dict) or not isinstance(kept.get("option_id"), str):
        return None, []
    return kept["option_id"], as_attachments(kept.get("attachments"))


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
        go_ahead = go_ahead_ids(request)
        if not go_ahead:  # most questions: no store trip
            return None
        key = confirming_key(record.request_id, sender.user_id)
        waiting, attachments = _waiting(await self.store.get_json(key))
        picked = request.option_by_id(waiting) if waiting is not None else None
        plain_yes = is_affirmative(text) and not looks_like_answer(request, text)  # no option's label
        if picked is None:
            if is_confirm_word(text) and not looks_like_answer(request, text):
                # someone else's pick, or none: a bare "confirm" answers nothing and closes nothing
                return ui_text("confirm_nothing", request.locale)
            return await self._affirmed(record, sender, by, go_ahead) if plain_yes else None
        if plain_yes:  # "yes" to "Reply “confirm” …": still that pick, asked again
            return _ask_line(request, picked.label)
        await self.store.delete(key)
        if is_confirm_word(text):
            return Confirmed(answer_with_option(request, picked.id, by), attachments)
        if looks_like_answer(request, text):
            return None
        return ui_text("confirm_dropped", request.locale, option=picked.label)

    async def _affirmed(
        self, record: PendingRecord, sender: Sender, by: AnsweredBy, go_ahead: list[str]
    ) -> str:
        """A plain "yes" (``is_affirmative``) with no pick waiting: the one go-ahead option picked,
        to be confirmed as a typed pick is; with several, which one (the question stays open)."""
        request = record.request
        if len(go_ahead) == 1:
            ask = await self.ask_first(record, sender, answer_with_option(request, go_ahead[0], by))
            if ask is not None:
                return ask
        numbered = [f"{n}. {o.label}" for n, o in enumerate(request.options, 1) if o.id in go_ahead]
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
        if response.response_kind != "option" or not goes_ahead(request, response.option_id):
            return None
        ttl = max(int(record.expires_at - time.time()), 1)
        kept = {
            "option_id": response.option_id,
            "attachments": [a.model_dump(mode="json") for a in attachments],
        }
        await self.store.set_json(confirming_key(record.request_id, sender.user_id), kept, ttl)
        return _ask_line(request, response.value)


def _ask_line(request: HumanInputRequest, option: str) -> str:
    """ "Reply “confirm” to go ahead with “{option}” …", in the question's language."""
    word = ui_text("confirm", request.locale).casefold()
    return ui_text("confirm_typed", request.locale, word=word, option=option)
