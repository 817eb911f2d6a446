"""The typed-answer window: a person who chose "Other…" (or "Fill in") types the answer.

When a person starts answering a question that way (``GatewayPort.may_answer``), what they type
in its conversation within ``ANSWERING_SECONDS`` is the question's answer whatever it says
(``expects_typed_answer``), read as text typed in the box is (``answers.other_answer``: "2" is
two, not option 2): the store keeps ``answering:{request}:{user}`` that long, never past
the question's own time. Closing the platform's box unused, where the platform says so (Slack's
``view_closed``), ends the window at once (``end_typed_answer``): the person's next message is a
new message again, and the question stays open with its buttons.
"""

from __future__ import annotations

import time

from clarigate.gateway.boundary.messages import PendingView, Sender
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.store.records import PendingRecord

ANSWERING_SECONDS = 15 * 60  # "Other…" chosen: what the person types within this is its answer


def answering_key(request_id: str, user_id: str) -> str:
    """The state key that says ``user_id`` is typing the answer to question ``request_id``."""
    return f"answering:{request_id}:{user_id}"


async def expect_typed_answer(state: AdapterState, view: PendingView, sender: Sender) -> None:
    """Remember that ``sender`` chose to answer ``view`` (``Other…``, ``Fill in``): their typed
    message within ``ANSWERING_SECONDS`` is its answer whatever it says (``expects_typed_answer``)."""
    ttl = max(int(min(view.expires_at - time.time(), ANSWERING_SECONDS)), 1)
    await state.set_json(answering_key(view.request.request_id, sender.user_id), 1, ttl)


async def expects_typed_answer(state: AdapterState, record: PendingRecord, sender: Sender) -> bool:
    """True when ``sender`` chose to answer ``record`` by typing (``expect_typed_answer``).

    Never for a form: free text cannot fill one, so it stays a new request.
    """
    if record.request.input_mode == "form":
        return False
    return await state.get_json(answering_key(record.request_id, sender.user_id)) is not None


async def end_typed_answer(state: AdapterState, request_id: str, user_id: str) -> None:
    """``user_id`` closed the box they chose to answer question ``request_id`` in, unused: what
    they type next is a new message, no longer its answer (the question itself stays open)."""
    await state.delete(answering_key(request_id, user_id))
