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

from .feedback import FeedbackAsk, Vote
from .feedback import FeedbackOutcome as FeedbackOutcome  # named here for the adapters
from .feedback import FeedbackStatus as FeedbackStatus
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
    # the person dismissed the question (Cancel, ``/cancel``), asked in this locale: should its graph
    # refuse the declined answer (a typed interrupt's schema), they are told the task stopped
    dismissed_in: Locale | None = None
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


# --- what the core hands to an adapter to send -------------------------------------------
#
# Delivery ids: every reply, question and error of a job carries ``delivery_id``, a UUID the
# core derives from the job and the item's place in it. It is the same on every retry of that
# item, also from another replica after a crash, and differs between items. An adapter whose
# platform deduplicates sends by a caller's key passes it on (Feishu's ``uuid`` on
# im/v1/messages: one message per uuid within an hour), so a send repeated after a crash
# between the platform's answer and the core's record of it is not shown twice. None for items
# sent outside a job (refusals, progress).


class TextReply(BaseModel):
    """An agent reply in Markdown (untrusted model text: escape per platform).

    ``private_to``: a notice for one person only (a refusal naming who is asked); adapters show
    it as privately as the platform allows (Slack: an ephemeral message; Telegram: a reply to
    that person's message; Feishu: a reply that mentions only them). The core sends each such
    note once per question and person, so it is never a public line on every message.

    ``notice``: ``text`` as its parts when the core's words name people (``people.Notice``), so
    that an adapter may show each person its platform's way (Slack: a mention); ``text`` says the
    same with their names, for adapters that show it as it is.

    ``live``: the run's live message (``PlatformAdapter.show_live``) that this reply finishes:
    the adapter ends the stream and makes that message the properly formatted reply (further
    parts of a long reply follow as messages of their own). A ``DeliveryFailed`` that is
    permanent makes the core send the reply again without ``live``, as an ordinary message.

    ``question_follows``: the run's question is the next item, delivered right after this reply;
    an adapter whose live message can end with the question's controls (Slack's stream closing
    with ``blocks``) may leave the message open for it. The question's delivery then closes it,
    or finishes it as usual and posts the question under it.

    ``from_agent``: the agent's own words (what a run said), not a line of the gateway's (a
    command's answer, a refusal, a note): an adapter that tracks what the agent said last
    (Telegram's step-by-step form in a private chat) counts these, never the gateway's lines.
    """

    kind: Literal["text"] = "text"
    text: str
    private_to: Sender | None = None
    notice: Notice | None = None  # ``text``'s parts when it names people (``people.Notice``)
    delivery_id: str | None = None  # see "Delivery ids" above
    live: MessageRef | None = None
    question_follows: bool = False
    # the run's final answer: 👍/👎 under it (under its last part, where it is split)
    feedback: FeedbackAsk | None = None
    from_agent: bool = False


class LiveView(BaseModel):
    """What a run's live message shows now (``PlatformAdapter.show_live``).

    ``text`` is the answer so far as the model streams it: untrusted model Markdown, escaped by
    the adapter on every update as on the final reply. Within one message it only grows, and
    ``shown`` is the part of it the message already shows (an append-only API sends the rest);
    None when that is not known (a message started by another replica before a hand-over):
    replace the whole content then. ``status`` is a line saying what is going on
    ("🔧 Searching the docs…", "⏳ Working…"), already in the person's language; None once the
    answer is being written. ``recipient``: the person the run answers (who started it), whom a
    platform streaming to a named person (Slack outside DMs) streams to. ``failed``: the status
    lines of steps whose tool's last call came back with an error (Slack's timeline marks them)."""

    model_config = ConfigDict(frozen=True)

    mode: str  # the adapter's ``live_mode`` for this conversation
    text: str = ""
    shown: str | None = ""
    status: str | None = None
    locale: Locale = "en"
    recipient: Sender | None = None
    failed: frozenset[str] = frozenset()


class LiveEnd(BaseModel):
    """Close a run's live message that no reply finishes (the run asked a question or failed
    before writing any text): remove it, or end its stream, leaving nothing half-written."""

    kind: Literal["live_end"] = "live_end"
    ref: MessageRef
    delivery_id: str | None = None  # see "Delivery ids" above


class ClarificationOut(BaseModel):
    """A clarification request to render natively; button payloads carry ``token``."""

    kind: Literal["clarification"] = "clarification"
    request: HumanInputRequest
    fallback_text: str
    token: str
    delivery_id: str | None = None  # see "Delivery ids" above


class ClarificationClosed(BaseModel):
    """A clarification was answered (typed reply or elsewhere): update its message."""

    kind: Literal["closed"] = "closed"
    view: PendingView
    answered_line: str


class ProgressUpdate(BaseModel):
    """The agent started (show "working…") or finished (remove/update it via ``ref``)."""

    kind: Literal["progress"] = "progress"
    state: Literal["started", "done"]
    ref: MessageRef | None = None
    locale: Locale = "en"  # the language the person wrote in, for "working…"
    # "done": the run's reply is sent next, so an adapter may turn the indicator into it (one
    # edit instead of a delete and a post); False when nothing follows (a cancelled run)
    reply_follows: bool = True


class ErrorReply(BaseModel):
    """A short, honest error for the chat (run failed, input refused, …); ``private_to`` as on
    ``TextReply``."""

    kind: Literal["error"] = "error"
    text: str
    private_to: Sender | None = None  # as on ``TextReply``
    notice: Notice | None = None  # as on ``TextReply``
    delivery_id: str | None = None  # see "Delivery ids" above


class FileReply(BaseModel):
    """A file the agent sends (a CSV, a chart): its bytes, a name and a type; ``image`` when the
    platform is to show it as a picture rather than a file to download.

    The bytes are in the item (JSON: base64), fetched and checked against the platform's limit
    (``PlatformAdapter.file_limit``) before the item is recorded, so a retried delivery sends the
    same file. ``caption``: text to show with it (split where the platform's caption is short).
    Delivered by ``PlatformAdapter.send_file``."""

    model_config = ConfigDict(ser_json_bytes="base64", val_json_bytes="base64")

    kind: Literal["file"] = "file"
    name: str
    mime_type: str = "application/octet-stream"
    data: bytes
    image: bool = False
    caption: str = ""
    fallback_text: str = ""  # the line for the person if the platform refuses the file for good
    delivery_id: str | None = None  # see "Delivery ids" above

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return len(self.data)


Outbound = (
    TextReply | ClarificationOut | ClarificationClosed | ProgressUpdate | ErrorReply | LiveEnd | FileReply
)
