"""Receiving from Slack: the HTTP endpoint and events parsed into ``InboundMessage``.

Bolt verifies the signature (5-minute window, 401) and answers ``url_verification``; signature
headers its verifier would raise on rather than refuse (``unverifiable``) are refused (401) first;
either way the refusal is said in the log, at most once a minute (``signatures.py``).
A body Bolt cannot even parse raises ``BadRequest`` (400) here, because Bolt raises while
building the request, before it checks anything; so does a signed body whose shape Bolt's
matchers or our listeners cannot use (``shape_problem``), and any payload Bolt itself still
chokes on while routing it (``bolt_choked``). A listener's own failure is raised again from
the endpoint: a 500, logged with its traceback by the server (Redis unreachable: a 503, one
line per outage).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from prometheus_client import Counter
from slack_bolt.adapter.starlette.async_handler import to_async_bolt_request, to_starlette_response
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request
from starlette.responses import Response

from clarigate.agent.who import ChatType
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.boundary.messages import (
    Attachment,
    AttachmentKind,
    Conversation,
    InboundMessage,
    Sender,
)

from ..written import written_at
from .decode import decode_text, mentions_a_group, without_lone_surrogates
from .edits import edit_ignored
from .shared import shared_attachments
from .signatures import Refusals, unverifiable

PLATFORM = "slack"
log = logging.getLogger(__name__)

#: Where ``SlackAdapter._on_error`` leaves a request's failure (in the Bolt request's context)
#: for the endpoint to raise: the server's one way of answering failures.
FAILURE = "clarigate_failure"

IGNORED_REQUESTS = Counter(
    "clarigate_slack_requests_ignored_total",
    "Slack requests acknowledged with nothing to do (no listener wants them)",
    ["kind"],
)
# Request and event types named in the count; anything else is counted as "other" so that a
# signed but odd request cannot grow the number of series.
_KNOWN_KINDS = {
    "app_rate_limited",
    "shortcut",
    "message_action",
    "block_suggestion",
    "block_actions",
    "view_closed",
    "view_submission",
    "interactive_message",
    "event_callback",
}
_KNOWN_EVENTS = {
    "message",
    "app_mention",
    "app_home_opened",
    "app_context_changed",
    "app_uninstalled",
    "tokens_revoked",
    "member_joined_channel",
    "reaction_added",
    "reaction_removed",
    "file_shared",
    "channel_archive",
}


def request_kind(body: dict[str, Any]) -> str:
    """A short name for a request, for logs and the ignored-requests count."""
    if "command" in body and "type" not in body:
        return "slash_command"
    kind = str(body.get("type") or "unknown")
    if kind == "event_callback":
        event_type = str((body.get("event") or {}).get("type") or "unknown")
        return f"event:{event_type if event_type in _KNOWN_EVENTS else 'other'}"
    return kind if kind in _KNOWN_KINDS else "other"


def count_ignored(kind: str) -> None:
    """Count one request acknowledged without work."""
    IGNORED_REQUESTS.labels(kind).inc()


# Message subtypes that are a person writing (``me_message``: "/me waves", read as text);
# everything else (edits, deletions, joins, bot posts) is not something to answer.
_PERSON_SUBTYPES = {None, "file_share", "thread_broadcast", "me_message"}
_MEDIA_KINDS: dict[str, AttachmentKind] = {"image": "image", "audio": "audio", "video": "video"}
_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


@dataclass(frozen=True)
class ParsedMessage:
    """An inbound message, and whether the bot must already take part in its thread."""

    message: InboundMessage
    needs_known_thread: bool = False


def event_message_id(channel: str, ts: str) -> str:
    """The dedupe id of a Slack message: the ``message`` and ``app_mention`` events of
    one message (and every retry of either) share it, so it runs once."""
    return f"{channel}:{ts}"


#: Slack retries an Events API event three times (at once, after about a minute, after about
#: five), numbering each in ``X-Slack-Retry-Num``, and then drops it: the third is its last.
LAST_RETRY = 3


def is_last_retry(headers: Mapping[str, Sequence[str]]) -> bool:
    """True for Slack's last delivery of an event (Bolt's headers: lowercase names, lists)."""
    number = next(iter(headers.get("x-slack-retry-num") or ()), "").strip()
    return number.isdigit() and int(number) >= LAST_RETRY


def strip_bot_mention(text: str, bot_user_id: str | None) -> str:
    """The text without mentions of the bot itself (``<@UBOT> hi`` -> ``hi``; ``ask <@UBOT> to
    deploy`` -> ``ask to deploy``, one space left where the mention stood between words)."""
    if bot_user_id:
        text = re.sub(rf"( ?)<@{re.escape(bot_user_id)}(?:\|[^>]*)?>( ?)", _one_space, text)
    return text.strip()


def _one_space(found: re.Match[str]) -> str:
    return " " if found.group(1) and found.group(2) else ""


#: The ``ref`` of a Slack Connect file known only by its id, looked up with ``files.info``.
FILE_INFO_REF = "slack-file-info:"


def file_attachment(file: dict[str, Any]) -> Attachment | None:
    """A file shared on a message as an ``Attachment`` (``ref``: its ``url_private_download``).

    Files the workspace hides (``mode: hidden_by_limit``) or deleted ones (``tombstone``) come
    without a name or URL: they are left out, there is nothing to fetch or describe. A file
    shared from another organisation (Slack Connect, ``file_access: check_file_info``) comes as
    its id alone: ``ref`` names it for ``files.info``, asked after the ack.
    """
    if file.get("file_access") == "check_file_info" and file.get("id"):
        return Attachment(kind="file", name=str(file.get("name") or ""), ref=FILE_INFO_REF + str(file["id"]))
    name = str(file.get("name") or file.get("title") or "")
    ref = str(file.get("url_private_download") or file.get("url_private") or "")
    if file.get("mode") in ("hidden_by_limit", "tombstone") or not (name or ref):
        return None
    mime = file.get("mimetype") or None
    size = file.get("size")
    return Attachment(
        kind=_MEDIA_KINDS.get(str(mime or "").split("/", 1)[0], "file"),
        name=name,
        mime_type=str(mime) if mime else None,
        size=size if isinstance(size, int) and size >= 0 else None,
        ref=ref,
    )


def parse_message_event(
    body: dict[str, Any],
    bot_user_id: str | None,
    names: dict[str, str] | None = None,
    agent_view: bool = False,
) -> ParsedMessage | None:
    """The ``InboundMessage`` in a ``message`` or ``app_mention`` event, or None to ignore it.

    DMs: one agent thread per DM (``topic`` None); with ``agent_view`` (Slack's agent messaging
    experience) one per thread of the DM, a top-level message starting one. A channel mention starts a thread
    at the mentioning message (or continues the thread it was written in); a plain
    channel message counts only as a reply in a thread the bot already takes part in; one that
    mentions people or a group (``@here``, a user group) but not the bot is said to them (``said_to_others``:
    the core ignores it unless it is its writer's typed answer to the thread's question).
    The text is decoded (``decode_text``; ``names`` maps mentioned user ids to names); files and
    messages shared into it (``shared.py``) come as its attachments.
    """
    event = body.get("event") or {}
    kind, subtype = event.get("type"), event.get("subtype")
    channel, ts, user = event.get("channel"), event.get("ts"), event.get("user")
    if kind not in ("message", "app_mention") or subtype not in _PERSON_SUBTYPES:
        return None
    if event.get("bot_id") or not channel or not ts or not user or edit_ignored(event, kind, ts):
        return None
    text = str(event.get("text") or "")
    mentioned = _USER_MENTION.findall(text)
    mentions_bot = bool(bot_user_id) and bot_user_id in mentioned
    placed = _place(body, event, channel, mentions_bot, agent_view)
    if placed is None:
        return None
    conversation, needs_known_thread = placed
    message = InboundMessage(
        conversation=conversation,
        sender=Sender(user_id=user, team=str(event.get("user_team") or "") or None),  # Slack Connect: theirs
        text=decode_text(strip_bot_mention(text, bot_user_id), names),
        event_id=event_message_id(channel, ts),
        message_id=ts,
        attachments=[
            *(
                attachment
                for f in event.get("files") or []
                if isinstance(f, dict) and (attachment := file_attachment(f)) is not None
            ),
            *shared_attachments(event, names),  # messages shared into it (``shared.py``)
        ],
        is_mention=kind == "app_mention" or mentions_bot,
        said_to_others=needs_known_thread and (bool(mentioned) or mentions_a_group(text)),  # not the bot
        received_at=written_at(ts),  # when it was posted (its ``ts``), however late it comes
    )
    return ParsedMessage(message, needs_known_thread)


def _place(
    body: dict[str, Any], event: dict[str, Any], channel: str, mentions_bot: bool, agent_view: bool
) -> tuple[Conversation, bool] | None:
    """Where a person's message belongs, and whether only a thread the bot knows makes it the
    bot's (a plain channel reply); None for what is not for the bot at all."""
    kind, ts, thread_ts = event.get("type"), event.get("ts"), event.get("thread_ts")
    is_direct = kind == "message" and event.get("channel_type") == "im"
    needs_known_thread = False
    if is_direct and agent_view:  # each conversation with the agent is a thread of its own
        topic = reply_to = thread_ts or ts
    elif is_direct:
        topic, reply_to = None, thread_ts
    elif kind == "app_mention":
        topic = reply_to = thread_ts or ts
    else:
        if mentions_bot or not thread_ts or thread_ts == ts:
            return None  # mentions of the bot arrive as app_mention; top-level chatter is not for it
        topic = reply_to = thread_ts
        needs_known_thread = True
    conversation = Conversation(
        platform=PLATFORM,
        workspace=str(body.get("team_id") or event.get("team") or ""),
        chat_id=channel,
        topic=topic,
        is_direct=is_direct,
        reply_to=reply_to,
        chat_type=chat_type_of(event.get("channel_type"), channel),
    )
    return conversation, needs_known_thread


#: Slack's ``channel_type`` -> the conversation's chat type (a private channel is a channel too).
CHAT_TYPES: dict[str, ChatType] = {"im": "private", "mpim": "group", "channel": "channel", "group": "channel"}


def chat_type_of(channel_type: Any, channel: str) -> ChatType | None:
    """The chat type a message event names; an ``app_mention`` names none, so its channel's id
    says (``D…`` a DM, ``C…`` a channel; a ``G…`` id may be either kind of group: None)."""
    if isinstance(channel_type, str) and channel_type in CHAT_TYPES:
        return CHAT_TYPES[channel_type]
    return {"D": "private", "C": "channel"}.get(channel[:1])  # type: ignore[return-value]


def interaction_sender(body: dict[str, Any]) -> Sender:
    """Who clicked or submitted: the user id only, as a message's sender on arrival, so every
    line that names a person can show them as a mention (Slack renders ``<@U…>`` as their name);
    the agent gets their name, asked where the answer's job runs (``names.named_sender``)."""
    user = body.get("user") or {}
    return Sender(user_id=str(user.get("id", "")), team=str(user.get("team_id") or "") or None)


def interaction_id(body: dict[str, Any]) -> str:
    """The dedupe id of a click or submit: a replayed request carries the same one."""
    actions = body.get("actions") or [{}]
    unique = body.get("trigger_id") or actions[0].get("action_ts") or (body.get("view") or {}).get("hash", "")
    return f"interaction:{unique}"


def shape_problem(body: Any) -> str | None:
    """What makes a parsed body unusable (Bolt would fail on it inside a listener), or None.

    Only the parts Bolt's matchers and our listeners index into are checked: the type (every
    payload but a slash command's form has one), the event of an event callback, the user and
    actions of a click (each with the ``action_id`` Slack's ``block_actions`` payload always
    carries), the view of a modal submit, the command and its ``trigger_id`` (its dedupe id).
    """
    if not isinstance(body, dict):
        return "the body is not an object"
    kind = body.get("type")
    if not isinstance(kind, str) and "command" not in body and "ssl_check" not in body:
        return "a request without a type"  # only a slash command (a form) comes without one
    if kind == "event_callback":
        return _event_problem(body.get("event"))
    if kind in ("block_actions", "view_submission", "view_closed", "block_suggestion"):
        if not isinstance(body.get("user"), dict):
            return f"{kind} without a user object"
    if kind == "block_actions":
        return _actions_problem(body.get("actions"))
    if kind in ("view_submission", "view_closed"):
        view = body.get("view")
        if not isinstance(view, dict) or not isinstance(view.get("type"), str):
            return f"{kind} without a typed view"
        if not isinstance(view.get("callback_id", ""), str):
            return f"{kind} with a callback_id that is not text"
    if "command" in body and not isinstance(body["command"], str):
        return "a slash command whose command is not text"
    if "command" in body and not (isinstance(body.get("trigger_id"), str) and body["trigger_id"]):
        return "a slash command without a trigger_id"  # Slack always sends one: it is the dedupe id
    return None


def _event_problem(event: Any) -> str | None:
    if not isinstance(event, dict):
        return "event_callback without an event object"
    if not isinstance(event.get("type"), str):
        return "event_callback with an event without a type"
    if event["type"] in ("message", "app_mention"):
        fields = ("user", "channel", "text", "ts", "thread_ts", "channel_type", "bot_id")
        if any(not isinstance(event.get(name, ""), str) for name in fields):
            return "a message event with a non-text field where text belongs"
    return None


def _actions_problem(actions: Any) -> str | None:
    if not isinstance(actions, list) or not actions or not all(isinstance(a, dict) for a in actions):
        return "block_actions without a list of actions"
    if not all(isinstance(a.get("action_id"), str) for a in actions):
        return "block_actions with an action without an action_id"
    first = actions[0]  # the one Bolt and our listener read
    value, picked = first.get("value"), first.get("selected_option")
    if isinstance(picked, dict):
        value = picked.get("value")
    elif picked is not None:
        return "block_actions with a selected_option that is not an object"
    if not isinstance(value, str | None):
        return "block_actions with an action whose value is not text"
    return None


def bolt_choked(error: Exception, frames: TracebackType | None) -> bool:
    """True when Bolt itself failed on the payload (a matcher, a middleware or its error handler
    indexing a field that is missing or of another type) and none of our code ran in ``frames``
    (the traceback below where it was caught): the payload's fault, not ours."""
    if not isinstance(error, (LookupError, TypeError, AttributeError, ValueError)):
        return False
    while frames is not None:
        if str(frames.tb_frame.f_globals.get("__name__", "")).startswith("clarigate."):
            return False  # raised in (or below) one of our listeners
        frames = frames.tb_next
    return True


def cannot_route(body: dict[str, Any], error: Exception) -> BadRequest:
    """The bad request of a payload Bolt choked on (``bolt_choked``)."""
    return BadRequest(f"a {request_kind(body)} request Bolt cannot route ({type(error).__name__})")


def events_endpoint(app: AsyncApp, signing_secret: str):  # type: ignore[no-untyped-def]
    """The Starlette endpoint for ``POST /slack/events`` (events and interactivity)."""
    verifier = SignatureVerifier(signing_secret)
    refusals = Refusals()

    async def slack_events(request: Request) -> Response:
        if unverifiable(request.headers):
            return refusals.answer(request)
        body = await request.body()
        try:
            bolt_request = without_lone_surrogates(to_async_bolt_request(request, body), body)
        except (ValueError, LookupError, TypeError, AttributeError, RecursionError):
            # Bolt parses the raw body (JSON or a form with a JSON payload) before any check
            raise BadRequest(f"malformed body ({len(body)} bytes)") from None
        problem = shape_problem(bolt_request.body)
        if problem is not None:
            # Unsigned junk is a forgery (401, as Bolt would say); signed junk is malformed (400).
            if not verifier.is_valid_request(body, dict(request.headers)):
                return refusals.answer(request)
            raise BadRequest(f"signed request of the wrong shape: {problem}")
        try:
            bolt_response = await app.async_dispatch(bolt_request)
        except Exception as error:
            # Bolt's error handler itself indexes the payload (its ``action`` argument)
            if error.__traceback__ and bolt_choked(error, error.__traceback__.tb_next):
                raise cannot_route(bolt_request.body, error) from None
            raise
        failure = bolt_request.context.get(FAILURE)
        if failure is not None:
            raise failure
        if bolt_response.status == 401:  # Bolt's signature check (its only 401 without a verification token)
            return refusals.answer(request)
        return to_starlette_response(bolt_response)

    return slack_events
