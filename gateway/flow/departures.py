"""A person who leaves a group (or is removed): the questions asked of them there close, as Cancel.

With ``answer_policy: starter`` (the default) only the person a question is for may answer it;
once they are gone nobody can, and the conversation would wait behind it until it expires. The
adapter reports the departure (``GatewayPort.member_left``); each question asked of that person
in that chat and still open closes as ``cancelled`` (``Control.close_question``), as their Cancel
would: its message shown closed, the agent told in a follow-up run. A question anyone may answer
(``anyone``) stays open for the others.

Which questions: saving one (``OneQuestion.save``) notes its request id under its chat and person
(``note_asked``), the last ``MAX_NOTED``, for as long as the newest lives. The store has no index of
open questions by chat; a note lost (two questions for the same person in the same chat saved at
the same moment: read, then written) leaves that question to expire as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from clarigate.agent.protocol import DeclineReason
from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import ClaimResult, PendingRecord

log = logging.getLogger(__name__)

#: How many of a person's questions in one chat are remembered (one per conversation of theirs).
MAX_NOTED = 20

#: Closes a question without an answer (``Control.close_question``).
CloseQuestion = Callable[[PendingRecord, Sender, DeclineReason], Awaitable[ClaimResult]]


def asked_key(conversation: Conversation, user_id: str) -> str:
    """The store key of the questions asked of ``user_id`` in the chat of ``conversation``."""
    return f"asked-in:{conversation.platform}:{conversation.workspace}:{conversation.chat_id}:{user_id}"


async def note_asked(store: Store, record: PendingRecord) -> None:
    """Remember ``record``, just saved, under its chat and the person it is for (not in a direct
    chat, which nobody leaves; not one anyone may answer). Best effort: the store failing, the
    question is asked all the same."""
    asker, conv = record.asked_by, record.conversation
    if asker is None or conv.is_direct or record.policy != "starter":
        return
    key = asked_key(conv, asker.user_id)
    try:
        noted = await store.get_json(key)
        ids = [i for i in noted if isinstance(i, str)] if isinstance(noted, list) else []
        ids = [*(i for i in ids if i != record.request_id), record.request_id][-MAX_NOTED:]
        await store.set_json(key, ids, max(int(record.expires_at - time.time()), 1))
    except Exception as exc:  # noqa: BLE001 (only a departure's closing is lost)
        log.warning("noting question %s under its asker failed: %s", record.request_id, exc)


class Departures:
    """Closes the open questions of people who left a chat (``GatewayPort.member_left``)."""

    def __init__(self, store: Store, close: CloseQuestion) -> None:
        self.store = store
        self.close = close

    async def member_left(self, conversation: Conversation, person: Sender) -> int:
        """``person`` left the chat of ``conversation`` (its topic aside): each open question only
        they may answer there closes as ``cancelled``; how many closed. Never raises."""
        closed = 0
        try:
            noted = await self.store.get_json(asked_key(conversation, person.user_id))
            for request_id in noted if isinstance(noted, list) else []:
                record = await self.store.get_pending(str(request_id))
                if record is not None and _theirs_only(record, person):
                    claim = await self.close(record, person, "cancelled")
                    closed += claim.status == "claimed"  # else answered a moment ago
        except Exception as exc:  # noqa: BLE001 (the platform does not tell again: they expire)
            log.warning("closing the questions of %s, who left, failed: %s", person.user_id, exc)
        if closed:
            log.info("closed %d question(s) of %s, who left %s", closed, person.user_id, conversation.chat_id)
        return closed


def _theirs_only(record: PendingRecord, person: Sender) -> bool:
    """True when ``record`` is open, and ``person``, its asker, is the only one who may answer it."""
    asker = record.asked_by
    return (
        record.status == "pending"
        and record.expires_at > time.time()
        and record.policy == "starter"
        and asker is not None
        and asker.user_id == person.user_id
    )
