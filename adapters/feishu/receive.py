"""Verified Feishu events -> the core: messages to ``accept``, card clicks to ``submit_answer``.

Both receive modes (webhook and long connection) hand the decrypted event dict
to ``FeishuReceiver.handle``; it returns the card-callback reply (toast and
updated card) or None for plain events. Everything here is fast: the core only
enqueues, the agent runs later.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from clarigate.agent.protocol import catalog, ui_text
from clarigate.gateway.boundary.messages import (
    AnswerStatus,
    Conversation,
    InboundAnswer,
    InboundMessage,
    PendingView,
    Sender,
)
from clarigate.gateway.boundary.port import GatewayPort
from clarigate.gateway.runtime.metrics import INBOUND_EVENTS

from .actions import read_card_action
from .card_replies import (
    checked_action,
    interaction_id,
    invalid_message,
    operator_open_id,
    repeat_reply,
    toast,
    unattributed,
    with_card,
)
from .card_updates import ANSWER_SECONDS, CardUpdate, CardUpdates, clicked_card, clicked_conversation
from .content import ALL_KEY, MalformedEvent, mention_open_id, read_content
from .departures import MEMBERS_LEFT_EVENT, members_left
from .feedback import record_vote, vote_of
from .identity import Deferrals, last_push
from .legacy import (
    MESSAGE_EVENT,
    is_legacy_card_callback,
    legacy_card_event,
    legacy_reply,
    schema_one_message,
)
from .names import NameBook
from .p2p_threads import continued
from .render import fits, native_card, render_answered

PLATFORM = "feishu"
CARD_ACTION_EVENT = "card.action.trigger"
#: A person recalled (撤回) a message: one whose run has not started is not run.
RECALLED_EVENT = "im.message.recalled_v1"

#: How long a message mentioning someone waits for the bot's open_id while the adapter is still
#: asking for it the first time (``startup``): the ack stays inside Feishu's 3 s, the long
#: connection's 2.5 s too. Once an ask failed, nothing waits: it is asked again in the background,
#: and a group message mentioning someone is left for Feishu to push again (``identity``).
IDENTITY_WAIT_SECONDS = 1.5

#: The neutral commands the core handles (``gateway/boundary/port.py``).
COMMANDS = ("/new", "/cancel", "/help", "/status", "/start")

log = logging.getLogger(__name__)

#: Posts a note (its text) for one person (an open_id) where a conversation's replies go, once per
#: key (``Destinations.note``).
Notify = Callable[[Conversation, str, str, str], Awaitable[object]]


def _dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedEvent(f"{what} is missing or not an object")
    return value


def command_text(text: str) -> str:
    """``text`` with a command spelled the Feishu way turned into the neutral command.

    Chinese input methods type a full-width slash (``／new``) and phones capitalise the
    first letter (``/New``); the bot's mention is already gone (``@bot /cancel``).
    """
    stripped = text.strip()
    if stripped.startswith("／"):
        stripped = "/" + stripped[1:]
    word, *rest = stripped.split(maxsplit=1) or [""]  # words after any space: "\n", "\t", "　"
    if word.lower() in COMMANDS:
        return " ".join([word.lower(), *rest])
    return text


def created_at(message: dict[str, Any]) -> float:
    """When the person wrote the message (``create_time``, ms), not when Feishu delivered it.

    A re-push hours later must not look like a reply to a question asked meanwhile.
    """
    try:
        return int(str(message.get("create_time"))) / 1000
    except ValueError:
        return time.time()


def parse_message(payload: dict[str, Any], bot_open_id: str | None = None) -> InboundMessage | None:
    """An ``im.message.receive_v1`` event as an ``InboundMessage`` (None for bots' messages).

    Deduplicated by ``message_id``: Feishu may push one message again under a new
    ``event_id`` and documents ``message_id`` as the key to deduplicate on.
    Topic: in a group, the thread's root message (a top-level mention is the root of the thread
    the bot's reply starts); in a p2p chat None, or the thread's root for a message written in a
    thread (话题, ``thread_id`` set; a quoting reply has none; ``p2p_threads`` for the bot's post,
    in a group too).
    A mention is the bot's when it carries the bot's open_id: without it (``bot_open_id`` None,
    Feishu has not told it yet) no group message counts as a mention of the bot, neither an
    "@所有人" (``@_all``, empty ids) nor a mention of anyone else (the receiver leaves a group
    message with mentions for Feishu to push again meanwhile: ``identity``).
    """
    header = _dict(payload.get("header"), "header")
    event = _dict(payload.get("event"), "event")
    message = _dict(event.get("message"), "event.message")
    sender = _dict(event.get("sender"), "event.sender")
    if sender.get("sender_type", "user") != "user":
        return None
    sender_ids = _dict(sender.get("sender_id"), "event.sender.sender_id")
    chat_id, message_id = message.get("chat_id"), message.get("message_id")
    if not (chat_id and message_id and sender_ids.get("open_id")):
        raise MalformedEvent("message event without chat, message or sender id")
    is_direct = message.get("chat_type") == "p2p"
    # a group's message is in a thread, a p2p one when written in a thread (话题: ``thread_id``)
    topic = str(message.get("root_id") or message_id) if not is_direct or message.get("thread_id") else None
    mentions = [m for m in message.get("mentions") or [] if isinstance(m, dict)]
    mentioned = bool(bot_open_id) and any(mention_open_id(m) == bot_open_id for m in mentions)
    content = read_content(message, bot_open_id)
    return InboundMessage(
        conversation=Conversation(
            platform=PLATFORM,
            workspace=str(header.get("tenant_key") or sender.get("tenant_key") or ""),
            chat_id=str(chat_id),
            topic=topic,
            is_direct=is_direct,
            reply_to=topic,
            # Feishu's chat_type: ``p2p`` (one person) or ``group``; it has no broadcast channel
            chat_type="private" if is_direct else "group" if message.get("chat_type") else None,
        ),
        sender=Sender(user_id=str(sender_ids["open_id"])),
        text=command_text(content.text),
        event_id=f"message:{message_id}",
        message_id=str(message_id),
        attachments=content.attachments,
        is_mention=is_direct or mentioned,
        received_at=created_at(message),
    )


def mentions_someone(payload: dict[str, Any]) -> bool:
    """Whether a message event carries mentions (which of them is the bot needs its open_id)."""
    event = payload.get("event")
    message = event.get("message") if isinstance(event, dict) else None
    return isinstance(message, dict) and bool(message.get("mentions"))


def mentions_everyone(payload: dict[str, Any]) -> bool:
    """Whether a message event says "@所有人" (its key in the content; ``mentions`` may omit it)."""
    event = payload.get("event")
    message = event.get("message") if isinstance(event, dict) else None
    return isinstance(message, dict) and ALL_KEY in str(message.get("content") or "")


class FeishuReceiver:
    """Routes verified events to the core; shared by the webhook and the long connection."""

    def __init__(
        self,
        gateway: GatewayPort,
        names: NameBook | None = None,
        update_card: CardUpdate | None = None,
        notify: Notify | None = None,
        language: str | None = None,
    ) -> None:
        self.gateway = gateway
        self.language = language  # people's language on the app's domain (a message says none)
        self.names = names  # people's names for open_ids, when the app may read them
        # replaces a card the bot sent: an old-style callback's, a click answered before the core was done
        self.cards = CardUpdates(update_card)
        self.notify = notify  # a note for one person where a conversation's replies go
        self.bot_open_id: str | None = None  # learnt at start; tells mentions of the bot apart
        self.identity: asyncio.Future[None] | None = None  # learning it (the adapter's start)
        self.deferrals = Deferrals()  # group messages left for Feishu to push again meanwhile

    def person(self, open_id: str) -> Sender:
        """The sender behind ``open_id``, named when the name is known already: an ack never
        waits for a lookup (an unknown name is looked up meanwhile, for next time)."""
        if self.names is None:
            return Sender(user_id=open_id)
        name = self.names.known(open_id)
        if name is None:
            self.names.warm(open_id)
        return Sender(user_id=open_id, display_name=name)

    async def handle(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Handle one event; returns the reply for a card callback, None otherwise."""
        if is_legacy_card_callback(payload):
            started, event = time.monotonic(), legacy_card_event(payload)
            message_id, language = clicked_card(event)
            tell = partial(self.tell_late, {}, event)
            reply = await self.cards.in_time(self.on_card_action({}, event), message_id, language, tell)
            left = ANSWER_SECONDS - (time.monotonic() - started)  # Feishu's 3 s: the API's part
            return await legacy_reply(reply, message_id, self.cards, left)
        if "header" not in payload and isinstance(payload.get("event"), dict):
            # schema 1.0 ({"uuid", "token", "ts", "type": "event_callback", "event": {"type": …}}):
            # a message is read like its 2.0 twin; anything else is acknowledged (so Feishu does
            # not re-push it for hours) and named in the log
            message = schema_one_message(payload)
            if message is not None:
                await self.on_message(message, mentioned=bool(payload["event"].get("is_mention")))
                return None
            INBOUND_EVENTS.labels(PLATFORM, "other").inc()
            log.warning(
                "feishu: ignored a schema 1.0 %r event: subscribe the app to im.message.receive_v1 "
                "(events v2.0) under Events & Callbacks",
                payload["event"].get("type"),
            )
            return None
        header = _dict(payload.get("header"), "header")
        event_type = header.get("event_type")
        if event_type == MESSAGE_EVENT:
            await self.on_message(payload)
            return None
        if event_type == CARD_ACTION_EVENT:  # answered within Feishu's 3 s, however slow the core
            event = _dict(payload.get("event"), "event")
            tell = partial(self.tell_late, header, event)
            return await self.cards.in_time(self.on_card_action(header, event), *clicked_card(event), tell)
        INBOUND_EVENTS.labels(PLATFORM, "other").inc()
        body = payload.get("event")
        recalled = body.get("message_id") if event_type == RECALLED_EVENT and isinstance(body, dict) else None
        if isinstance(recalled, str) and recalled:  # its run, not started yet, is dropped
            await self.gateway.withdraw(PLATFORM, f"message:{recalled}")  # as ``parse_message`` has it
        if event_type == MEMBERS_LEFT_EVENT and isinstance(body, dict):  # their questions close
            await members_left(self.gateway, header, body)
        return None

    async def on_message(self, payload: dict[str, Any], mentioned: bool = False) -> None:
        """Hand a person's message to the core (dedupe, allowlist and typed answers are its job).

        ``mentioned``: the event says the bot was mentioned (schema 1.0 has no mention list).
        ``IdentityUnknown`` for a group message mentioning someone while the bot's identity is
        unknown: the receive mode answers so that Feishu pushes it again (its last push is taken,
        as said to the bot: ``identity``).
        """
        learning = self.identity if self.bot_open_id is None and mentions_someone(payload) else None
        if learning is not None:  # still starting: the identity learnt here, not known yet
            await asyncio.wait({learning}, timeout=IDENTITY_WAIT_SECONDS)
        message = parse_message(payload, self.bot_open_id)
        if message is None:
            return
        if learning is not None and self.bot_open_id is None and not message.conversation.is_direct:
            if not last_push(payload):  # which mention is the bot's cannot be told: pushed again later
                raise self.deferrals.one()
            self.deferrals.taken()  # Feishu's last push: taken as said to the bot, never lost
            mentioned = True
        if mentioned:
            message = message.model_copy(update={"is_mention": True})
        said_to = mentions_someone(payload) or mentions_everyone(payload)
        if not (message.is_mention or message.conversation.is_direct) and said_to:
            # said to the members it mentions (or to everyone), not the bot: the core ignores it
            # unless it is its writer's typed answer to the thread's open question
            message = message.model_copy(update={"said_to_others": True})
        if not (message.text or message.attachments):
            if not message.is_mention:
                return
            # "@bot" and nothing else: someone wants to know what the bot does
            message = message.model_copy(update={"text": "/help"})
        # a thread under the bot's post in the chat: the conversation the post belonged to
        message = await continued(self.gateway.state, message)
        conversation = message.conversation
        if not (
            message.is_mention
            or conversation.is_direct
            or await self.gateway.knows_conversation(conversation)
        ):
            return  # group chatter the bot is not part of (seen when the app may read all group messages)
        sender = self.person(message.sender.user_id)  # still unnamed: named where the job runs
        await self.gateway.accept(message.model_copy(update={"sender": sender, "language": self.language}))

    async def on_card_action(self, header: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
        """Answer a click or form submit: toast, and the updated card when the answer counted."""
        action = checked_action(_dict(event.get("action"), "event.action"))
        if operator_open_id(event) is None:  # nobody to count the click for: said so, not a 400
            return unattributed(event)
        value = action.get("value")
        token = value.get("t") if isinstance(value, dict) else None
        if isinstance(value, dict) and vote_of(value) is not None:  # 👍/👎: no question behind it
            return await record_vote(
                self.gateway, value, self._operator(event), interaction_id(header, event)
            )
        view = await self.gateway.pending_by_token(str(token)) if token else None
        if view is None:  # said in the card's language, which the card carries along
            zh = isinstance(value, dict) and value.get("l") == "zh"
            return toast(ui_text("expired", "zh" if zh else "en"), "warning")
        sender = self._operator(event)
        read = read_card_action(view.request, action)
        if read.opens_other:
            return await self.open_other(view, sender)
        if read.ignore:
            return {}
        if read.problems:  # not the asker's to fix when someone else may not answer at all
            refusal = await self.gateway.may_answer(view, sender, expect_typing=False)
            if refusal is not None:
                return toast(refusal.message or ui_text("expired", view.request.locale), "warning")
            return toast("; ".join(read.problems), "error")
        outcome = await self.gateway.submit_answer(
            InboundAnswer(
                sender=sender,
                event_id=interaction_id(header, event),
                token=view.token,
                option_id=read.option_id,
                text=read.text,
                values=read.values,
                decline=read.decline,
                conversation=view.conversation,
            )
        )
        if outcome.accepted:  # a Cancel is confirmed with the core's own line ("✖ Cancelled by …")
            said = outcome.answered_line if read.decline else ui_text("answer_received", view.request.locale)
            done = toast(said or ui_text("answer_received", view.request.locale), "success")
            card = render_answered(view.request, outcome.answered_line, sender.user_id)
            self.cards.also_original(view.message_ref, clicked_card(event)[0], card)
            return with_card(done, card)
        if outcome.status is AnswerStatus.DUPLICATE:
            return repeat_reply(outcome.view or view)
        if outcome.status is AnswerStatus.INVALID:
            return toast(invalid_message(view, outcome.message, outcome.errors), "error")
        return toast(outcome.message or ui_text("expired", view.request.locale), "warning")

    async def tell_late(self, header: dict[str, Any], event: dict[str, Any], refusal: str) -> None:
        """A click's refusal that came after it was answered "being handled" (the toast that would
        have said it is gone): said to the clicker where the question was asked (a click no question
        is behind, a 👍/👎, or one on a forwarded copy of its card: under the clicked card), in a
        group to them alone, once however often Feishu delivers the click (its id keys the note)."""
        value = event["action"].get("value")  # the action was read already: it is an object
        token = value.get("t") if isinstance(value, dict) else None
        view = await self.gateway.pending_by_token(str(token)) if token else None
        clicked, ref = clicked_conversation(event, PLATFORM), view.message_ref if view else None
        on_copy = ref is not None and clicked is not None and ref.message_id != clicked.reply_to
        where = view.conversation if view is not None and not on_copy else clicked
        if where is None or self.notify is None:
            log.info("feishu: a click's late refusal has no conversation to be said in")
            return
        text = f"{catalog.icon('warning')} {refusal}"
        await self.notify(where, self._operator(event).user_id, text, interaction_id(header, event))

    def _operator(self, event: dict[str, Any]) -> Sender:
        """Who clicked (``event.operator.open_id``); MalformedEvent when it is missing."""
        open_id = operator_open_id(event)
        if open_id is None:
            raise MalformedEvent("card action without operator.open_id")
        return self.person(open_id)

    async def open_other(self, view: PendingView, sender: Sender) -> dict[str, Any]:
        """Show the "Other…" input to whoever may answer; others get the refusal."""
        refusal = await self.gateway.may_answer(view, sender)
        if refusal is not None:
            return toast(refusal.message, "warning")
        card = native_card(view.request, view.token, other_open=True)
        if not fits(card):
            return toast(ui_text("type_answer", view.request.locale))
        return with_card({}, card)
