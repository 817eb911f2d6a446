"""The Telegram adapter: python-telegram-bot's ``Bot`` wired to the gateway.

Receives through the webhook route or a leased long poller, renders with ``render``, sends with
``send``; button taps and form steps live in ``interactions``, start and stop in ``lifecycle``.
"""

from __future__ import annotations

import logging

from telegram import Message, Update
from telegram.error import TelegramError
from telegram.ext import Defaults, ExtBot
from telegram.request import HTTPXRequest

from clarigate.adapters.telegram.settings import TelegramSettings
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Attachment, Conversation, InboundMessage, MessageRef
from clarigate.gateway.boundary.outbound_items import FileReply, LiveView, Outbound
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter

from .albums import gather, note_item
from .chat_action import TypingIndicators
from .commands import Command, group_help, parse_command
from .deferred import DeferredEdits
from .departures import on_left, on_member_changed
from .effects import AfterAck
from .ephemeral import EphemeralNotes
from .forms import note_said
from .interactions import Interactions
from .lifecycle import TelegramLifecycle
from .live import LiveMessages
from .media import attachments_of, fetch_file
from .migration import ChatMoves
from .outbound import TelegramOutbound
from .person_chains import accept_noted, command_named, their_conversation
from .polling import LeasedPoller, PolledBot
from .receive import (
    BotIdentity,
    chain_of,
    conversation_for,
    inbound_message,
    mentions_bot,
    message_text,
    one_to_one,
    replies_to_bot,
    said_to_others,
    sender_for,
    topic_of,
    without_mention,
)
from .send import NO_PREVIEW, TelegramSender, delivery_failure
from .upload import TelegramFiles, file_limit

log = logging.getLogger(__name__)


class TelegramAdapter(TelegramLifecycle, PlatformAdapter):
    """Telegram through the Bot API: webhook or leased polling, inline keyboards, form wizards."""

    platform = "telegram"
    settings_model = TelegramSettings

    def __init__(
        self, settings: TelegramSettings, gateway: GatewayPort, lease_ttl: int = 30, poll_timeout: int = 10
    ) -> None:
        self.settings = settings
        self.gateway = gateway
        token = settings.bot_token.get_secret_value() if settings.bot_token else ""
        # no link preview under any text (``NO_PREVIEW``): a model's link would show its site's page
        self.bot: ExtBot[None] = PolledBot(  # getUpdates read update by update
            token or "0:missing",
            defaults=Defaults(link_preview_options=NO_PREVIEW),
            base_url=settings.api_url,
            base_file_url=_file_url(settings.api_url),
            request=HTTPXRequest(connection_pool_size=32),
            get_updates_request=HTTPXRequest(read_timeout=poll_timeout + 10),
        )
        self.moves = ChatMoves(gateway.state)
        self.sender = TelegramSender(self.bot, self.moves)
        self.deferred = DeferredEdits(gateway.state, self.sender)
        self.after_ack = AfterAck(self.deferred)
        self.notes = EphemeralNotes(self.sender)  # notes to one member of a group (Bot API 10.2)
        self.interactions = Interactions(gateway, self.sender, self.after_ack, self.notes)
        self.me: BotIdentity | None = None
        self.poller: LeasedPoller | None = None
        if not settings.webhook_url:
            self.poller = LeasedPoller(self.bot, gateway.state, self.handle_update, lease_ttl, poll_timeout)
        self.typing = TypingIndicators(self.sender)
        self.live = LiveMessages(self.sender, gateway.state, self.typing)
        self.outbound = TelegramOutbound(gateway, self.sender, self.live, self.typing, self.notes)
        self.files = TelegramFiles(self.sender, gateway.state)

    # --- receiving -----------------------------------------------------------------------------

    async def handle_update(self, update: Update) -> None:
        """One update from the webhook or the poller: a button tap, a member who left, or a message."""
        message = update.message
        if message is None:
            await self._not_a_message(update)
            return
        if await self._not_a_request(message):
            return
        sender = sender_for(message)
        if sender is None:
            return  # other bots (and this one)
        me = self.me or await self._identity()
        command = parse_command(message, me.username)
        if command is not None and not command.for_us:
            return  # /cmd@otherbot
        text = message_text(message)
        attachments = await self._attachments(update, message, command, text, me)
        if command is None and not text.strip() and not attachments:
            return  # service messages: members joining, pins, topic changes
        private = one_to_one(message)  # a private chat, or a person's topic of a channel's direct messages
        mention, reply = mentions_bot(message, me), replies_to_bot(message, me)
        # In groups (forum topics included) the bot takes part only where it is addressed:
        # a command, a mention, or a reply to one of its messages (a reply naming others but not
        # the bot is said to them, ``aside``: the core ignores it unless it answers its writer's question).
        if not (private or mention or reply or command is not None):
            return
        if command is not None and not command.known and not (private or command.explicit):
            return  # a bare command we do not know, in a group: meant for another bot
        clean = without_mention(text if command is None else command.as_text(), me)
        named = command_named(command, clean)  # ``@bot /取消`` acts as ``/cancel@bot`` does
        conversation = await self._conversation(message, reply)
        conversation = await their_conversation(self.gateway.state, message, conversation, sender, named)
        forms = self.interactions.forms
        if named in ("new", "cancel"):  # the gateway closes the question; the form stops taking values now
            await forms.close_for(str(message.chat_id), sender, conversation, named)
        neutral = command.neutral_text() if command is not None else None
        if neutral is not None:  # the core's command, or ``/ask``'s request
            asks = command is not None and command.asks  # ``/ask …``: a new request, never an answer
            said = inbound_message(
                update, message, conversation, sender, neutral, True, attachments, new_request=asks
            )
            await accept_noted(self.gateway, said)
            return
        aside = not private and reply and said_to_others(message, me)
        typed = named is None  # a caption is typed (an album's is a message of its own: ``on_typed``)
        if typed and await forms.on_typed(message, conversation, sender, clean, aside, attachments):
            return
        inbound = inbound_message(update, message, conversation, sender, clean, True, attachments, aside)
        await accept_noted(self.gateway, inbound)

    async def _not_a_message(self, update: Update) -> None:
        """A button tap, or a member who left (``chat_member``); edits, channel posts: not requests."""
        if update.callback_query is not None:
            await self.interactions.on_callback(update.callback_query)
            return
        await on_member_changed(self.gateway, self.moves, update.chat_member)

    async def _attachments(
        self, update: Update, message: Message, command: Command | None, text: str, me: BotIdentity
    ) -> list[Attachment]:
        """What came with the message; an album's item noted, to be taken with the others (``albums``)."""
        attachments = attachments_of(message)
        if message.media_group_id:  # its caption as the gateway gets it (``/ask``'s words alone)
            neutral = command.neutral_text() if command is not None else None
            said = neutral or without_mention(text if command is None else command.as_text(), me)
            asks = command is not None and command.asks
            await note_item(self.gateway.state, message, str(update.update_id), said, attachments, asks)
        return attachments

    async def complete_message(self, message: InboundMessage) -> InboundMessage | None:
        """An album's item with the album's other items and caption; None once another took it."""
        return await gather(self.gateway.state, message)

    async def _not_a_request(self, message: Message) -> bool:
        """A group's move to a supergroup (followed here), a member leaving, a channel's post copied in."""
        if message.migrate_to_chat_id:  # said in the old group
            await self.moves.moved(str(message.chat_id), str(message.migrate_to_chat_id))
            return True
        if message.migrate_from_chat_id:  # said in the new supergroup
            await self.moves.moved(str(message.migrate_from_chat_id), str(message.chat_id))
            return True
        # a member who left (their open questions close), a linked channel's post copied in
        return await on_left(self.gateway, self.moves, message) or bool(message.is_automatic_forward)

    async def _conversation(self, message: Message, reply: bool) -> Conversation:
        """Where the message belongs: a private chat, or its topic; an upgraded group's supergroup
        keeps the group's id, and a reply to the bot in a group outside a forum topic stays in the
        reply chain of the message it answers, known by the chat that chain began in."""
        if message.chat.type == "private":
            return conversation_for(message)
        chat_id, chain = await self.moves.identity(str(message.chat_id)), None
        if reply and topic_of(message) is None and message.reply_to_message is not None:
            replied = str(message.reply_to_message.message_id)  # a message of this very chat
            chat_id, chain = await chain_of(self.gateway.state, str(message.chat_id), replied, chat_id)
        return conversation_for(message, chain, chat_id)

    async def _identity(self) -> BotIdentity:
        user = await self.bot.get_me()
        self.me = BotIdentity(id=user.id, username=user.username or "")
        return self.me

    def how_to_talk(self, conversation: Conversation, locale: Locale) -> str | None:
        """In a group, ``/help`` says ``/ask@thisbot …`` or a reply: privacy mode hides the rest."""
        return group_help(conversation, self.me.username if self.me else "", locale)

    # --- sending -------------------------------------------------------------------------------

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item (see ``clarigate.gateway.boundary.messages``); Bot API errors
        come back as ``DeliveryFailed``."""
        try:
            return await self.outbound.deliver(conversation, item)
        except TelegramError as exc:
            failure = delivery_failure(exc, item.kind)
            log.log(
                logging.INFO if failure.chat_refused else logging.WARNING,  # the core's WARNING says it
                "telegram %s to chat %s failed (%s, %s): %s",
                item.kind,
                conversation.chat_id,
                failure.code,
                "permanent" if failure.permanent else "transient",
                exc,
            )
            raise failure from exc

    def file_limit(self, conversation: Conversation, item: FileReply) -> int:
        """50 MB, the Bot API's upload limit (``upload.py``: photos up to 10 MB, documents)."""
        return file_limit(item)

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        """A file the agent sends, as a photo or a document; Bot API errors as ``DeliveryFailed``.
        In a private chat it is then the agent's latest message (``note_said``)."""
        try:
            ref = await self.files.send(conversation, item)
        except TelegramError as exc:
            failure = delivery_failure(exc, item.kind)
            level = logging.INFO if failure.chat_refused else logging.WARNING  # the core's WARNING says it
            log.log(
                level, "telegram file to chat %s failed (%s): %s", conversation.chat_id, failure.code, exc
            )
            raise failure from exc
        await note_said(self.gateway.state, conversation, ref)
        return ref

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """A photo's or file's bytes through ``getFile`` and the file download (a worker calls this)."""
        return await fetch_file(self.bot, attachment, max_bytes)

    # --- live messages (``live``): drafts in private chats, an edited message elsewhere ------------

    def live_mode(self, conversation: Conversation) -> str | None:
        """ "draft" in private chats and their topics (``sendMessageDraft``), "edit" in groups."""
        return self.live.mode(conversation)

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """1 s for drafts and private chats, 3 s in groups (Telegram: 20 messages a minute)."""
        return self.live.interval(conversation, mode)

    async def live_over(self, conversation: Conversation, ref: MessageRef) -> None:
        """This replica stops updating the run's draft or message: no more "typing…" or draft
        sent again from here (the reply, or the replica that took the job over, goes on)."""
        self.live.quiet(conversation, ref)

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Create or update a run's live draft or message; Bot API errors as ``DeliveryFailed``
        (a flood wait transient, with Telegram's ``retry_after``: never waited out here)."""
        try:
            return await self.live.show(conversation, view, ref)
        except TelegramError as exc:
            failure = delivery_failure(exc, f"live {view.mode} update")
            log.info(
                "telegram live %s update in chat %s failed (%s): %s",
                view.mode,
                conversation.chat_id,
                failure.code,
                exc,
            )
            raise failure from exc


def _file_url(api_url: str) -> str:
    """Where files are downloaded from: ``…/file/bot`` beside the API's ``…/bot``."""
    return api_url[: -len("/bot")] + "/file/bot" if api_url.endswith("/bot") else api_url
