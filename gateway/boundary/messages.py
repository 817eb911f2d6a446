"""Normalized messages between adapters and the core.

Adapters turn platform payloads into these and render these into platform payloads;
the core never sees a platform payload and adapters never see Redis or LangGraph.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
from clarigate.agent.protocol.models import Locale
from clarigate.agent.who import ChatType

from .feedback import FeedbackAsk as FeedbackAsk  # named here for the adapters
from .feedback import FeedbackOutcome as FeedbackOutcome
from .feedback import FeedbackStatus as FeedbackStatus
from .feedback import Vote
from .people import Notice as Notice  # named here for the adapters
from .people import Sender as Sender


class Conversation(BaseModel):
    """Where a message was written and where replies go.

    ``topic`` scopes the agent thread and is chosen by the adapter by the platform's rules: ``None``
    for a direct-message chat (one agent thread per DM; a topic of a Telegram private chat in threaded
    mode has its own), the thread/topic id for a channel thread or forum topic, the message id of a
    top-level channel mention (which starts a thread).
    """

    model_config = ConfigDict(frozen=True)

    platform: str
    workspace: str = ""
    chat_id: str
    topic: str | None = None
    is_direct: bool = False
    reply_to: str | None = None  # platform message id replies attach to (thread root, message to reply to)
    # what kind of chat, as the platform says: one person ("private"), several people ("group"),
    # a named channel ("channel"); None where the adapter cannot tell (the agent reads it)
    chat_type: ChatType | None = None

    @property
    def thread_key(self) -> str:
        """The chat-thread key the store maps to an agent thread."""
        return f"{self.platform}:{self.workspace}:{self.chat_id}:{self.topic or '-'}"


class MessageRef(BaseModel):
    """Enough to find a sent message again (to update or delete it)."""

    model_config = ConfigDict(frozen=True)

    platform: str
    chat_id: str
    message_id: str
    extra: dict[str, str] = Field(default_factory=dict)  # platform-specific bits (thread ts, topic id, …)


AttachmentKind = Literal["image", "file", "audio", "video", "sticker", "other"]


class Attachment(BaseModel):
    """A file that came with a message, as the adapter found it (nothing downloaded on the ack path).

    ``ref``: the adapter's handle to fetch the bytes later (``PlatformAdapter.fetch_attachment``).
    ``said``: the catalog key of ``name`` when the platform gave none (``attachments.shown_name``
    writes it in the person's language), ``seconds`` the length of a voice message.
    """

    model_config = ConfigDict(frozen=True)

    kind: AttachmentKind = "file"
    name: str = ""
    mime_type: str | None = None
    size: int | None = None  # bytes, when the platform says
    ref: str = ""
    said: str | None = None
    seconds: int | None = None

    def describe(self) -> str:
        """A short description for the agent: name, type and size."""
        parts = [self.name or self.kind, self.mime_type, None if self.size is None else f"{self.size} bytes"]
        return ", ".join(part for part in parts if part)


class InboundMessage(BaseModel):
    """A message a person wrote to the bot."""

    model_config = ConfigDict(frozen=True)

    conversation: Conversation
    sender: Sender
    text: str
    event_id: str  # the platform's delivery id, deduplicated by the core
    message_id: str | None = None
    attachments: list[Attachment] = Field(default_factory=list)
    is_mention: bool = False
    received_at: float = Field(default_factory=time.time)  # when written, if the platform says
    received_within: float = 0.0  # how coarse ``received_at`` is (Telegram: 1.0, whole seconds)
    # The person's interface language when the platform says (Telegram's ``language_code``, a
    # Slack user's locale): ``zh-hans``, ``en-US``… Only the core's own words (help, status)
    # use it, and only when the text itself gives no sign of a language.
    language: str | None = None
    # People and channels mentioned in ``text`` as ``@<user id>`` / ``#<channel id>`` whose names
    # the adapter asks for after the ack (``PlatformAdapter.complete_message``, where the job
    # runs): never a platform call on the ack path. Slack's; others leave it empty.
    unnamed_mentions: tuple[str, ...] = ()
    # The platform will not deliver this message again if it is refused now (Slack's third and
    # last retry of an event): met by a store outage, the core keeps it on disk (``flow.kept``)
    # and acknowledges it instead of leaving it to a redelivery that would never come.
    last_delivery: bool = False
    # The message is for the bot only if the bot takes part in its thread (a plain reply in a
    # group's thread), which the adapter could not look up: kept at its last delivery during a
    # store outage. Where its job runs, the core checks (an agent thread, else the adapter's
    # ``PlatformAdapter.known_thread``) and drops it without a word if not.
    only_in_known_thread: bool = False
    # In a group's thread the bot takes part in, the message mentions other people but not the
    # bot: it is said to them. Where its job runs the core ignores it (no reply, nothing runs or
    # closes) unless it is its writer's typed answer to the thread's open question
    # (``TypedAnswers.answers_aside``), which it then is as if it named no one.
    said_to_others: bool = False
    # The person asked for a new request explicitly (Telegram's ``/ask …``): it is never the typed
    # answer to the thread's open question or form, which closes as superseded as it would for any
    # other new message, and it runs as a request.
    new_request: bool = False

    @property
    def inbound_id(self) -> str:
        """What its job goes by (deduplication, delivery ids): ``{platform}:{event_id}``."""
        return f"{self.conversation.platform}:{self.event_id}"


class MessageJob(BaseModel):
    """What an accepted message's job carries through the stream: ``{"message": …}``.

    Encoded and decoded as JSON in one pass each way (pydantic's own JSON, not a dict).
    """

    message: InboundMessage


class AnswerJob(BaseModel):
    """What a claimed answer's job carries: where to reply, the agent thread, the answer."""

    conversation: Conversation
    thread_id: str
    request_id: str | None = None
    response: HumanInputResponse
    sender: Sender
    text: str  # what the agent reads as this turn's message
    # the question's message is still to be closed (an operator cancelled it where the platform
    # is not configured): the replica that runs this turn closes it first
    close_message: bool = False
    after_reply_of: str | None = None  # the ``/cancel`` (inbound id) whose reply shows first (``closing``)
    # the person dismissed the question (Cancel, ``/cancel``) in this locale: should its graph
    # refuse the declined answer (a typed interrupt's schema), they are told the task stopped
    dismissed_in: Locale | None = None
    # the language the person closed the question in (the ``/cancel`` or ``/取消`` they typed): the
    # run's speaker locale, so the agent answers in it; None: the answer itself shows the language
    locale: Locale | None = None
    attachments: list[Attachment] = Field(default_factory=list)  # a pick's, confirmed in a box


class InboundAnswer(BaseModel):
    """A click, form submit or "Other…" text answering a pending clarification."""

    model_config = ConfigDict(frozen=True)

    sender: Sender
    event_id: str  # dedupe id of this interaction (action_ts, callback id, event id)
    token: str | None = None  # the request's short token from the button payload
    request_id: str | None = None  # when the adapter knows the id instead of a token
    option_id: str | None = None  # an option was picked
    text: str | None = None  # a free-text answer ("Other…")
    values: dict[str, Any] | None = None  # raw form values, typed by the core
    decline: bool = False  # the person dismissed the question (a Cancel button)
    conversation: Conversation | None = None  # where the interaction happened, when known
    attachments: list[Attachment] = Field(default_factory=list)  # sent with typed values: to the agent


class InboundFeedback(BaseModel):
    """A click on 👍 or 👎 under an answer (``FeedbackAsk``)."""

    model_config = ConfigDict(frozen=True)

    sender: Sender
    token: str  # ``FeedbackAsk.token`` from the control's payload
    vote: Vote
    event_id: str  # the interaction's id (logged; a repeated click changes nothing anyway)
    conversation: Conversation | None = None  # where the click happened, when known
    # the person's interface language when the platform says (Telegram's ``language_code``, the
    # locale a Feishu card carries): the words for an answer the core no longer knows
    language: str | None = None


class AcceptOutcome(StrEnum):
    """What the core did with an inbound message."""

    ACCEPTED = "accepted"  # stored durably; exactly one reply will follow
    DUPLICATE = "duplicate"  # seen before: nothing more happens
    REFUSED = "refused"  # not on the allowlist: a polite refusal is sent once
    IGNORED = "ignored"  # nothing to do (empty text, …)


class AnswerStatus(StrEnum):
    """What the core did with an answer."""

    ACCEPTED = "accepted"
    ALREADY_ANSWERED = "already_answered"
    EXPIRED = "expired"  # or unknown token / request
    NOT_ALLOWED = "not_allowed"
    INVALID = "invalid"  # form values need fixing: see ``errors``
    DUPLICATE = "duplicate"  # this very interaction was seen before


class PendingView(BaseModel):
    """A clarification as adapters see it: the request, where it was asked, its state."""

    model_config = ConfigDict(frozen=True)

    request: HumanInputRequest
    token: str
    conversation: Conversation
    message_ref: MessageRef | None = None
    asked_by: Sender | None = None  # who started the run that asked
    status: Literal["pending", "answered", "expired"] = "pending"
    answered_by: Sender | None = None
    response: HumanInputResponse | None = None
    expires_at: float = 0.0


class AnswerOutcome(BaseModel):
    """The core's verdict on an answer, with a message ready to show the person."""

    model_config = ConfigDict(frozen=True)

    status: AnswerStatus
    message: str = ""  # localized explanation (toast, ephemeral, callback answer)
    notice: Notice | None = None  # ``message``'s parts when it names people (``people.Notice``)
    errors: dict[str, str] = Field(default_factory=dict)  # field name -> message, for INVALID
    view: PendingView | None = None
    answered_line: str = ""  # "✅ Answered by X: Y", for updating the original message

    @property
    def accepted(self) -> bool:
        """True when this answer closed the request and starts the next run."""
        return self.status is AnswerStatus.ACCEPTED
