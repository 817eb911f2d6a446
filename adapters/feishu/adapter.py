"""The Feishu / Lark ``PlatformAdapter``: receive (webhook or long connection), render cards, send."""

from __future__ import annotations

import asyncio
import logging
from functools import partial

from starlette.routing import BaseRoute

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.agent.protocol import catalog, ui_text
from clarigate.gateway.boundary.messages import (
    Attachment,
    Conversation,
    FeedbackAsk,
    InboundMessage,
    MessageRef,
    Sender,
)
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    LiveEnd,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter

from ..pacing import SharedPace
from .content import split_ref
from .feedback import with_feedback
from .live import (
    LiveMessages,
)
from .live_replies import CLOSED_LINE, FeishuLiveReplies
from .long_connection import LongConnection
from .markup import split_reply
from .names import NameBook, named_sender
from .open_api import FeishuApiError, build_client
from .outgoing import Destinations, WorkingCards, card_refused, part_key
from .receive import PLATFORM, FeishuReceiver
from .render import (
    Card,
    card_json,
    render_answered,
    render_clarification,
    render_notice,
    reply_card,
)
from .send import FeishuSender
from .startup import Startup, credential_problems
from .upload import FeishuFiles
from .webhook import events_route

log = logging.getLogger(__name__)


class FeishuAdapter(FeishuLiveReplies, FeishuFiles, PlatformAdapter):
    """Feishu / Lark: interactive cards (JSON 2.0) with buttons, selects and forms."""

    platform = PLATFORM
    settings_model = FeishuSettings

    def __init__(self, settings: FeishuSettings, gateway: GatewayPort) -> None:
        self.settings = settings
        self.gateway = gateway
        self.sender = FeishuSender(partial(build_client, settings))  # built by ``start``, in a thread
        self.destinations = Destinations(self.sender, lambda: gateway.state)
        names, notify = NameBook(self.sender.user_name), self.destinations.note
        self.receiver = FeishuReceiver(
            gateway, names, self.sender.update_card, notify, settings.people_language()
        )
        self.long_connection = (
            LongConnection(settings, self.receiver, lambda: gateway.state.ping())
            if settings.mode == "long_connection"
            else None
        )
        self.working, self.live = WorkingCards(), LiveMessages()
        self.pace = SharedPace(lambda: gateway.state, PLATFORM)
        self.cardkit_paused_until = 0.0
        self._receiving = False  # the long connection was started here (not in a worker process)
        self.startup = Startup(self.sender, self.receiver, lambda: gateway.state, settings.app_id or "")

    def routes(self) -> list[BaseRoute]:
        """``POST /feishu/events`` in webhook mode; nothing in long connection mode."""
        if self.long_connection is not None:
            return []
        token = (
            self.settings.verification_token.get_secret_value() if self.settings.verification_token else None
        )
        key = self.settings.encrypt_key.get_secret_value() if self.settings.encrypt_key else None
        return [events_route(self.receiver, token, key)]

    async def start(self) -> None:
        """Load lark-oapi in the background (``startup``; ``start_receiving`` learns the bot's
        open_id too): the port opens and webhooks are taken meanwhile."""
        self.startup.begin()

    def still_starting(self) -> str | None:
        """Until lark-oapi is loaded and the bot's identity known: what ``/readyz`` says meanwhile
        ("starting", with why when Feishu failed to tell it and it is asked again)."""
        return self.startup.not_ready()

    async def complete_message(self, message: InboundMessage) -> InboundMessage:
        """The sender's name (contact API, cached, within the name book's time limit), asked
        where the job runs: the agent and the question's "Answered by" read it."""
        return message.model_copy(update={"sender": await self.complete_sender(message.sender)})

    async def complete_sender(self, sender: Sender) -> Sender:
        """A message's or an answer's sender named where its job runs (``names.named_sender``)."""
        return await named_sender(self.receiver.names, sender)

    async def start_receiving(self) -> None:
        """The bot's identity learnt (to tell mentions of it apart: only where messages are taken
        in), and the long connection, in that mode (webhook mode: Feishu calls the route)."""
        self.startup.learn_identity()
        if self.long_connection is not None:
            self.long_connection.start(asyncio.get_running_loop())
            self._receiving = True

    async def connection_up(self) -> bool | None:
        """Long connection mode: whether its thread runs (None in webhook mode or where it was
        not started, a worker process: nothing held open)."""
        if self.long_connection is None or not self._receiving:
            return None
        thread = self.long_connection._thread
        return thread is not None and thread.is_alive()

    async def stop(self) -> None:
        """Close the long connection, let clicked cards' updates under way land (a few seconds at
        most: no card left stale), close the API's connection pool."""
        await self.startup.stop()
        if self.long_connection is not None:
            await asyncio.to_thread(self.long_connection.stop)
        await self.receiver.cards.settle()
        self.sender.close()

    async def check(self) -> list[str]:
        """Missing credentials, unprotected webhooks, and whether a tenant token can be had."""
        return await credential_problems(self.settings, self.sender)

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item as cards; returns the message created, if any."""
        # the same on every retry of the item (None: progress, closes)
        key = getattr(item, "delivery_id", None)
        if isinstance(item, ClarificationOut):
            card = render_clarification(item.request, item.token, item.fallback_text)
            return await self.post(conversation, card, key=key)
        if isinstance(item, ClarificationClosed):
            ref, view = item.view.message_ref, item.view
            if ref is not None:
                who = view.answered_by.user_id if view.answered_by else None
                await self.sender.update_card(
                    ref.message_id, render_answered(view.request, item.answered_line, who)
                )
            return None
        if isinstance(item, TextReply | ErrorReply) and item.private_to and not conversation.is_direct:
            who = item.private_to.user_id  # a card only they see; else a reply mentioning only them
            private = await self.destinations.ephemeral.send(conversation, who, render_notice(item.text), key)
            note = render_notice(item.text, to=who)
            return private or await self.post(conversation, note, reuse=False, key=key)
        if isinstance(item, TextReply) and item.live is not None and item.private_to is None:
            return await self.finish_live(conversation, item, key)
        if isinstance(item, LiveEnd):
            await self.end_live(item.ref)
            return None
        if isinstance(item, TextReply):
            return await self.post_reply(conversation, item.text, key, feedback=item.feedback)
        if isinstance(item, ProgressUpdate):
            return await self.progress(conversation, item)
        if isinstance(item, ErrorReply):
            line = f"{catalog.icon('warning')} {item.text}"
            return await self.post_text(conversation, line, render_notice(line), key)
        return None

    async def post_reply(
        self,
        conversation: Conversation,
        text: str,
        key: str | None,
        first: int = 0,
        feedback: FeedbackAsk | None = None,
    ) -> MessageRef | None:
        """A reply as cards of at most ``REPLY_CHUNK_CHARS`` (from part ``first``), each sent as
        text when Feishu refuses its card (👍/👎 at the foot of the last); the first one's message."""
        refs, chunks = [], split_reply(text)
        for index, chunk in enumerate(chunks[first:], first):
            card = with_feedback(reply_card(chunk), feedback if index == len(chunks) - 1 else None)
            refs.append(await self.post_text(conversation, chunk, card, part_key(key, index), index == 0))
        return refs[0] if refs else None

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """The bytes of a file or image a person sent, through the message-resource API (size-capped)."""
        where = split_ref(attachment.ref)
        if where is None:  # stickers, merged forwards: nothing Feishu lets a bot download
            return None
        return await self.sender.fetch_resource(*where, max_bytes=max_bytes)

    async def progress(self, conversation: Conversation, item: ProgressUpdate) -> MessageRef | None:
        """A "Working…" card at the start; when the run is done, its first reply takes that card's place."""
        if item.state == "started":
            return await self.post(
                conversation,
                render_notice(f"{catalog.icon('working')} {ui_text('working', item.locale)}"),
                reuse=False,
            )
        if item.ref is not None:
            self.working.put(conversation.thread_key, item.ref)
        return None

    async def post(
        self, conversation: Conversation, card: Card, reuse: bool = True, key: str | None = None
    ) -> MessageRef:
        """Show ``card`` where the conversation's replies go (``key``: Feishu's ``uuid`` for it).

        It replaces the finished "Working…" card when there is one; otherwise it is
        posted in the thread (groups) or the chat (p2p). An edit that failed for now (a 5xx, a
        rate limit, the network) is raised with the card kept for the core's retry; one Feishu
        refuses for good (the card is gone or cannot be edited), or that fails again on that
        retry, posts ``card`` as a new message, the "Working…" card recalled (or closed) first.
        """
        if reuse:
            closed = render_notice(CLOSED_LINE)
            shown = await self.working.show(self.sender, conversation.thread_key, card, closed)
            if shown is not None:
                return shown
        return await self.deliver(conversation, card_json(card), key=key)

    async def deliver(
        self,
        conversation: Conversation,
        content: str,
        key: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> MessageRef:
        """Post an interactive message (``content``: card JSON or a card entity) where the
        conversation's replies go (``outgoing.Destinations``)."""
        return await self.destinations.deliver(conversation, content, key, extra)

    async def post_text(
        self, conversation: Conversation, text: str, card: Card, key: str | None, reuse: bool = True
    ) -> MessageRef:
        """``card`` showing ``text``; a plain text message when Feishu will not make a card of it."""
        try:
            return await self.post(conversation, card, reuse=reuse, key=key)
        except FeishuApiError as exc:
            if not card_refused(exc):
                raise
            log.warning("feishu: the card of a reply was refused (%s): sending it as text", exc.code)
            return await self.destinations.deliver_text(conversation, text, key)
