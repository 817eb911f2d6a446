"""Telegram updates in: the webhook route, and updates parsed into normalized messages.

Which agent thread a message belongs to (``Conversation.topic``):

- a private chat: ``None`` (one thread per chat), or, in a topic of it (the bot's threaded mode,
  Bot API 9.3), the topic's ``message_thread_id``, as in a forum;
- a forum topic: its ``message_thread_id`` (digits, so sends can target the topic);
- a person's topic of a channel's direct messages chat (Bot API 9.2): ``dm-{topic_id}``, each
  person's a conversation of its own (sends name it: ``direct_messages_topic_id``);
- a top-level ``/ask@bot …`` or mention in a group: ``msg-{message_id}`` (it starts a reply chain);
- a reply to one of the bot's messages in a group: the chain that message belongs to.

Who wrote it: the person, or the chat they write as (an anonymous admin is the group, a
channel poster the channel: ``sender_for``). A supergroup that a group was upgraded to
is known by the group's id (``migration``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from telegram import Bot, Message, MessageEntity, Update, User

from clarigate.agent.who import ChatType
from clarigate.gateway.boundary import surrogates
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.boundary.messages import Attachment, Conversation, InboundMessage, Sender
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.boundary.signing import same_secret
from clarigate.gateway.runtime.repeated import RepeatedWarning

from ..written import written_at
from .migration import reply_point
from .shape import update_problem

log = logging.getLogger(__name__)

PLATFORM = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
WEBHOOK_PATH = "/telegram/webhook"


class MalformedUpdate(BadRequest):
    """The body is not a Telegram update (400)."""


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is (from ``getMe``): to recognize mentions of it and replies to it."""

    id: int
    username: str


def parse_update(body: bytes, bot: Bot) -> Update:
    """An ``Update`` from a webhook's body; ``MalformedUpdate`` if it is not one."""
    try:
        data = surrogates.loads(body)  # a lone surrogate made U+FFFD
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise MalformedUpdate("body is not JSON") from exc
    return read_update(data, bot)


def read_update(data: object, bot: Bot) -> Update:
    """An ``Update`` from one decoded update (a webhook's body, one of a ``getUpdates`` batch);
    ``MalformedUpdate``, saying what is wrong but nothing it holds, if it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
        raise MalformedUpdate("no integer update_id")
    problem = update_problem(data)
    if problem is not None:
        raise MalformedUpdate(f"not a Telegram update: {problem}")
    try:
        update = Update.de_json(data, bot)
    except Exception as exc:  # PTB raises KeyError/TypeError/AttributeError on wrong shapes
        # the exception's text may quote the update: its type only
        raise MalformedUpdate(f"not a Telegram update ({type(exc).__name__})") from exc
    if update is None:
        raise MalformedUpdate("empty update")
    return update


def sender_of(user: User) -> Sender:
    """A Telegram user as a gateway sender (id as a string, full name to show)."""
    return Sender(user_id=str(user.id), display_name=user.full_name or user.username)


def sender_for(message: Message) -> Sender | None:
    """Who wrote a message; None for bots (including this one), which never make requests.

    An anonymous group admin writes as the group and a person posting as a channel writes as
    that channel (``sender_chat``; ``from`` is then a placeholder bot account): the sender chat
    is who they are, so they can talk to the bot and answer what it asks them.
    """
    if message.sender_chat is not None:
        chat = message.sender_chat
        return Sender(user_id=str(chat.id), display_name=chat.title or chat.username or chat.full_name)
    user = message.from_user
    if user is None or user.is_bot:
        return None
    return sender_of(user)


def language_of(message: Message) -> str | None:
    """The interface language of the writer's Telegram app (``language_code``), when it tells."""
    user = message.from_user
    code = (user.language_code or "") if user is not None and message.sender_chat is None else ""
    return code or None


def message_text(message: Message) -> str:
    """What its writer said: the text of a message, or the caption of a photo or document (links
    spelled out, ``spelled_text``); nothing for a forwarded message, someone else's words, which
    reach the agent described (``media``) and answer, command or mention nothing."""
    return "" if message.forward_origin is not None else spelled_text(message)


def spelled_text(message: Message) -> str:
    """The text or caption with each link spelled out: a ``text_link`` (words linked to a URL,
    which the text alone drops) reads ``words (url)``, as a labelled link does on Slack, so the
    agent sees where it points."""
    text = message.text or message.caption or ""
    entities = message.entities if message.text else message.caption_entities
    links = [e for e in entities if e.type == MessageEntity.TEXT_LINK and e.url]
    if not links:
        return text
    units = text.encode("utf-16-le")  # entity offsets count UTF-16 code units
    for link in sorted(links, key=lambda e: e.offset + e.length, reverse=True):
        end = 2 * (link.offset + link.length)
        shown = units[2 * link.offset : end].decode("utf-16-le", "replace").strip()
        if shown not in (link.url, _SCHEME.sub("", link.url or "")):
            units = units[:end] + f" ({link.url})".encode("utf-16-le") + units[end:]
    return units.decode("utf-16-le", "replace")


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def mentions_bot(message: Message, me: BotIdentity) -> bool:
    """True when the message @-mentions the bot (by username, text mention or ``/command@bot``);
    never a forwarded one, which quotes someone else."""
    if message.forward_origin is not None:
        return False
    entities = message.parse_entities() if message.text else message.parse_caption_entities()
    for entity, text in entities.items():
        if entity.type == "mention" and text[1:].lower() == me.username.lower():
            return True
        if entity.type == "text_mention" and entity.user is not None and entity.user.id == me.id:
            return True
        if entity.type == "bot_command" and text.lower().endswith(f"@{me.username.lower()}"):
            return True
    return False


def replies_to_bot(message: Message, me: BotIdentity) -> bool:
    """True when the message answers one of the bot's messages (in a forum the topic's
    service message is the implicit reply target, so only the bot's own messages count)."""
    target = message.reply_to_message
    return target is not None and target.from_user is not None and target.from_user.id == me.id


def one_to_one(message: Message) -> bool:
    """True in a private chat, and in a channel's direct messages chat (``is_direct_messages``, Bot API
    9.2), whose every topic is one person's private conversation with the channel: there each message
    is said to the bot, as in a private chat (no mention needed), and no one else is talked to. Not
    so a message the channel's admins send there, on behalf of the channel (``sender_chat``): it
    answers the person, and the bot takes part only where addressed, as in a group."""
    if message.chat.type == "private":
        return True
    return bool(message.chat.is_direct_messages) and message.sender_chat is None


def said_to_others(message: Message, me: BotIdentity) -> bool:
    """True when the message @-mentions someone (a ``mention`` or ``text_mention``) but not the
    bot, and is no command (``/cancel @carol`` is still the bot's). In a group such a reply to the
    bot is said to them: marked (``InboundMessage.said_to_others``), the core ignores it unless it
    is its writer's typed answer to the open question (a form's step takes it first: ``forms``)."""
    entities = message.parse_entities() if message.text else message.parse_caption_entities()
    if mentions_bot(message, me) or any(e.type == "bot_command" and e.offset == 0 for e in entities):
        return False
    return any(e.type in ("mention", "text_mention") for e in entities)


def without_mention(text: str, me: BotIdentity) -> str:
    """The text with the bot's @username removed, so the agent reads the request alone.

    Usernames are case-insensitive; a longer name that merely starts with the bot's
    (``@clari_botany``) is someone else and stays.
    """
    if not me.username:
        return text.strip()
    # Usernames are [A-Za-z0-9_]: the name ends at any other character (Chinese needs no space).
    mention = re.compile(rf"@{re.escape(me.username)}(?![A-Za-z0-9_]) ?", re.IGNORECASE)
    return mention.sub("", text).strip()


GENERAL_TOPIC = 1  # the "General" topic: no topic to name in a send (Telegram refuses thread 1)
DM_TOPIC = "dm-"  # a topic of a channel's direct messages chat: ``dm-{topic_id}``


def topic_of(message: Message) -> str | None:
    """The topic a message was written in, of a forum or of a private chat in threaded mode: its
    ``message_thread_id`` when ``is_topic_message`` says so (a reply in General carries the thread
    id of what it answers without it), and never General, where sends name no topic; in a
    channel's direct messages chat, the person's topic (``DM_TOPIC``)."""
    if message.direct_messages_topic is not None:
        return f"{DM_TOPIC}{message.direct_messages_topic.topic_id}"
    thread = message.message_thread_id
    if message.is_topic_message and thread and thread != GENERAL_TOPIC:
        return str(thread)
    return None


def topic_target(topic: str | None, forum_only: bool = False) -> dict[str, Any]:
    """What names a conversation's topic in a send: a forum's (or private chat's) numeric
    ``message_thread_id``, or a direct messages chat's ``direct_messages_topic_id`` (not with
    ``forum_only``: ``sendChatAction`` and ``sendMessageDraft`` take none, "typing…" shows chat-wide)."""
    if topic and topic.isdigit():
        return {"message_thread_id": int(topic)}
    number = (topic or "").removeprefix(DM_TOPIC)
    if topic and topic.startswith(DM_TOPIC) and number.isdigit() and not forum_only:
        return {"direct_messages_topic_id": int(number)}
    return {}


def conversation_for(
    message: Message, chain_topic: str | None = None, chat_id: str | None = None
) -> Conversation:
    """Where a message was written and where replies go (see the module docstring).

    ``chat_id`` overrides the message's chat: a supergroup a group was upgraded to keeps the
    group's id as its identity (``migration``); the reply then names the chat it quotes.
    """
    chat_id = chat_id or str(message.chat_id)
    topic = topic_of(message)
    if message.chat.type == "private":
        return Conversation(
            platform=PLATFORM, chat_id=chat_id, topic=topic, is_direct=True, chat_type="private"
        )
    reply_to = reply_point(str(message.chat_id), str(message.message_id), chat_id)
    topic = topic or chain_topic or f"msg-{message.message_id}"
    chat_type: ChatType = "channel" if message.chat.type == "channel" else "group"  # or supergroup
    return Conversation(
        platform=PLATFORM, chat_id=chat_id, topic=topic, reply_to=reply_to, chat_type=chat_type
    )


def chain_key(chat_id: str, message_id: str) -> str:
    """Shared-state key from a bot message in a group to the reply chain it belongs to: named by
    the chat the message is in, as its id is (a supergroup numbers its own messages, so one of a
    group's upgrade may be numbered like one of the group, ``migration``)."""
    return f"chain:{chat_id}:{message_id}"


def written_time(message: Message) -> float:
    """When a message was written (``date``), not when its update came: one redelivered late (a
    webhook call that failed, updates waiting for the poller) is older than a question asked (or a
    form opened, ``forms``) meanwhile, so no answer to it. ``date`` is in whole seconds (the second
    it was sent in) and the question's time is not: the message counts from the end of that second
    (capped at now), so an answer sent in the same second as the question is never taken for an
    older message; only one sent a moment before the question in that second, and delivered late,
    could pass for an answer. (Edited messages are not requests here: no ``edit_date``.)"""
    return written_at(message.date.timestamp() + 1)  # the end of its second


def inbound_message(
    update: Update,
    message: Message,
    conversation: Conversation,
    sender: Sender,
    text: str,
    mention: bool,
    attachments: list[Attachment] | None = None,
    aside: bool = False,
    new_request: bool = False,
) -> InboundMessage:
    """The normalized message; ``event_id`` is the ``update_id`` the core dedupes on (``aside``:
    said to the people it mentions, ``said_to_others``; ``new_request``: an ``/ask …``, never an
    answer); ``received_at``: ``written_time``."""
    return InboundMessage(
        conversation=conversation,
        sender=sender,
        text=text,
        event_id=str(update.update_id),
        message_id=str(message.message_id),
        attachments=attachments or [],
        is_mention=mention,
        language=language_of(message),
        said_to_others=aside,
        new_request=new_request,
        received_at=written_time(message),
        received_within=1.0,  # ``date`` is in whole seconds
    )


UpdateHandler = Callable[[Update], Awaitable[None]]


def webhook_route(bot: Bot, secret: str | None, handle: UpdateHandler) -> Route:
    """``POST /telegram/webhook``: secret checked (403), body parsed (``MalformedUpdate``: 400),
    handled, then 200.

    Without a configured secret every call is refused: an open webhook would let
    anyone forge updates. A refusal is the line deploy/README.md promises for a 4xx
    (``bad request to <route> (<status>): <reason>``), at most one a minute (``RepeatedWarning``:
    anyone can send a flood of them).

    A failure while handling is raised to the server (500, logged with its traceback; Redis
    unreachable: 503, one line per outage) so Telegram delivers the update again; the core's
    dedupe on ``update_id`` makes that redelivery safe.
    """

    refusals = RepeatedWarning(log)

    async def endpoint(request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER)
        if not secret or given is None or not same_secret(given, secret):
            reason = _refusal(secret, given)
            if not refusals.warning("bad request to %s (403): %s", WEBHOOK_PATH, reason):
                log.debug("bad request to %s (403): %s", WEBHOOK_PATH, reason)
            return PlainTextResponse("forbidden", status_code=403)
        update = parse_update(await request.body(), bot)
        await handle(update)
        return PlainTextResponse("ok")

    return Route(WEBHOOK_PATH, endpoint, methods=["POST"])


def _refusal(secret: str | None, given: str | None) -> str:
    """Why a webhook call was refused, naming the header and the setting, never a secret."""
    if not secret:
        return "TELEGRAM_WEBHOOK_SECRET is not set (polling mode): every webhook call is refused"
    if given is None:
        return f"no {SECRET_HEADER} header: not a call of Telegram's"
    return (
        f"wrong {SECRET_HEADER}: a forgery, or TELEGRAM_WEBHOOK_SECRET changed and the webhook "
        "not registered again (each start registers it)"
    )


CHAIN_TTL = 30 * 24 * 3600


async def remember_chain(
    state: AdapterState, conversation: Conversation, message_id: str, chat_id: str
) -> None:
    """Note which reply chain the bot's message ``message_id`` of ``chat_id`` (the chat it was
    posted in) belongs to, so replies to it stay there: its topic, with the conversation's chat
    when that is another (a group's conversation going on in the supergroup it was upgraded to)."""
    if conversation.topic and conversation.topic.startswith("msg-"):
        chain: str | dict[str, str] = conversation.topic
        if chat_id != conversation.chat_id:
            chain = {"chat": conversation.chat_id, "topic": conversation.topic}
        await state.set_json(chain_key(chat_id, message_id), chain, CHAIN_TTL)


async def chain_of(
    state: AdapterState, chat_id: str, message_id: str, identity: str
) -> tuple[str, str | None]:
    """The conversation a reply to the bot's message ``message_id`` of ``chat_id`` belongs to: the
    chat it is known by and its chain's topic (``remember_chain``). A chain keeps the chat it began
    in, whenever the bot heard of an upgrade. ``(identity, None)`` when no chain is known."""
    chain = await state.get_json(chain_key(chat_id, message_id))
    if isinstance(chain, dict) and chain.get("topic"):
        return str(chain.get("chat") or chat_id), str(chain["topic"])
    return (chat_id, chain) if isinstance(chain, str) and chain else (identity, None)
