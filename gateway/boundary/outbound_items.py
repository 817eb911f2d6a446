"""What the core hands to an adapter to send: replies, questions, progress, live messages, files.

The outbound side of the normalized messages (``messages`` holds the inbound side and the types
both share); ``Outbound`` is the union of the items ``PlatformAdapter.send`` delivers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from clarigate.agent.protocol import HumanInputRequest
from clarigate.agent.protocol.models import Locale

from .feedback import FeedbackAsk
from .messages import MessageRef, PendingView
from .people import Notice, Sender

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
