"""What the store keeps and hands back: clarification records, claims, jobs, delivery records.

The values ``Store`` (``base``) takes and returns, shared by its Redis and memory implementations
and by the flow that calls them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender


class PendingRecord(BaseModel):
    """A clarification waiting for its answer (``{prefix}:ask:{request_id}``)."""

    # Stored in Redis as a hash, one field per attribute (``keys.encode_record``).
    message_ref: MessageRef | None = None
    status: Literal["pending", "answered"] = "pending"
    answered_by: Sender | None = None
    response: HumanInputResponse | None = None
    request: HumanInputRequest
    token: str  # ``{prefix}:tok:{token}`` -> request_id
    thread_id: str  # the agent thread that asked
    conversation: Conversation
    asked_by: Sender | None = None
    policy: Literal["starter", "anyone"] = "starter"
    created_at: float
    expires_at: float

    @property
    def request_id(self) -> str:
        """The request's id."""
        return self.request.request_id


class ClaimResult(BaseModel):
    """The outcome of one atomic claim."""

    status: Literal["claimed", "already_answered", "missing", "duplicate", "restarted"]
    record: PendingRecord | None = None  # the record after the claim (or as found)


@dataclass(frozen=True, slots=True)
class ChatStatus:
    """What a chat thread has going on, for ``/status`` (``Store.chat_status``)."""

    thread_id: str | None  # its agent thread, None when it has none (yet, or any more)
    pending: PendingRecord | None  # the open clarification of that thread
    outstanding: int  # jobs accepted for this chat thread and not yet completed (running or waiting)


#: Where a delivered job stands for the consumer that asks (``Store.keep_jobs``).
HoldStatus = Literal["held", "taken", "gone"]


#: A job's data: a JSON object, or its JSON text as the store keeps it (``Store.accept_job``).
Payload = dict[str, Any] | str

#: ``(key, value, ttl_seconds)``: a JSON value another store step saves as ``Store.set_json`` would.
SavedState = tuple[str, Any, int]


@dataclass(slots=True)
class Job:
    """One unit of work read from the stream (built by the stores from what they hold)."""

    entry_id: str  # stream entry id
    kind: Literal["message", "answer", "command"]  # "command": conversation control, out of turn
    inbound_id: str  # "{platform}:{event id}": one reply per inbound id
    order_key: str
    seq: int
    payload_json: str = "{}"  # the job's data as stored; ``payload`` decodes it
    deliveries: int = 1

    @property
    def payload(self) -> dict[str, Any]:
        """The job's data (decoded on each access: the dispatcher reads it once)."""
        return json.loads(self.payload_json)  # type: ignore[no-any-return]


#: Platforms whose jobs a consumer leaves to others, and the acceptance time (unix) from which
#: it does (older ones it claims anyway, to end them): ``Store.claim_stale_jobs``.
Skip = tuple[frozenset[str], float] | None


@dataclass(slots=True)
class DeliveryRecord:
    """A job's outputs, recorded before any is sent, and how far their delivery got.

    ``plan`` is the dispatcher's JSON (the store keeps it as given); ``outcomes`` maps the index
    of each item whose delivery ended (sent, fallen back, abandoned) to the dispatcher's note.
    """

    plan: str
    outcomes: dict[int, str]
