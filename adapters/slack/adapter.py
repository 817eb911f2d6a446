"""The Slack adapter: Bolt ``AsyncApp`` for receiving, Block Kit for rendering, Web API for sending.

HTTP mode mounts ``POST /slack/events`` (events, interactivity and the ``/clarigate``
command on one URL); Socket Mode runs when ``settings.app_token`` is set. Listeners
finish their fast work (dedupe + enqueue, ``views.open``) before the ack is returned,
so a crash before the ack makes Slack redeliver instead of losing the message. Every
request no listener wants (``app_rate_limited``, other events, shortcuts, …) gets 200,
a debug line and a count: a 404 would only make Slack retry it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, ClassVar

import aiohttp
from starlette.routing import BaseRoute, Route

from clarigate.adapters.slack.settings import SlackSettings
from clarigate.gateway.boundary.messages import Attachment, Conversation, InboundMessage, MessageRef, Sender
from clarigate.gateway.boundary.outage import StoreOutage
from clarigate.gateway.boundary.outbound_items import FileReply, LiveView, Outbound
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter
from clarigate.gateway.flow.notices import notice

from . import readback
from .agent_view import AgentView, is_status
from .bolt_app import BotIdentity, build_bolt_app
from .commands import mention_spelling
from .departures import on_member_left
from .feedback import FEEDBACK_ACTION, FeedbackClicks
from .files import download, resolve
from .interactions import ClarificationInteractions
from .known import KnownThreads
from .listeners import SlackListeners
from .live import EDIT, STREAM, LiveMessages
from .names import PeopleBook, named, named_sender, shown_name
from .outbound import SlackOutbound
from .receive import FILE_INFO_REF, PLATFORM, events_endpoint
from .send import SlackSender, build_ack_path_client, build_client
from .socket_mode import CheckedSocketModeHandler, once_is_enough
from .startup import SlackStartError, credential_problems, sign_in, socket_url
from .upload import MAX_FILE_BYTES, SlackFiles

log = logging.getLogger(__name__)


class SlackAdapter(SlackListeners, PlatformAdapter):
    """Slack through Bolt: ``SlackAdapter(settings, gateway)``."""

    platform: ClassVar[str] = PLATFORM
    settings_model = SlackSettings
    command_syntax: ClassVar[str] = "/clarigate {command}"  # how /help and /status spell commands
    bot_name: str | None = None  # the name Slack shows for the bot (``start``): how people write @<bot>

    def __init__(self, settings: SlackSettings, gateway: GatewayPort) -> None:
        self.settings = settings
        self.gateway = gateway
        if settings.bot_token is None:
            raise ValueError("Slack needs SLACK_BOT_TOKEN (the app's xoxb- bot token)")
        self._token = token = settings.bot_token.get_secret_value()
        secret = settings.signing_secret.get_secret_value() if settings.signing_secret else ""
        self.client = build_client(token, settings.api_url)
        self.ack_client = build_ack_path_client(token, settings.api_url)
        self.sender = SlackSender(self.client, self.ack_client)
        # names and languages, one users.info a person; channels' names, one conversations.info each
        self.names = PeopleBook(
            self.sender.user_info, self.sender.channel_info, self.sender.usergroup_handles
        )
        self.live = LiveMessages(self.sender, lambda: gateway.state)
        self.bot_user_id: str | None = None
        self.threads = KnownThreads(gateway)  # the channel threads the bot takes part in
        # Work before ack: an exception answers 500 (Redis down: 503); Slack redelivers, deduped by id.
        # Unhandled requests reach ``_on_error`` (200 and a count) instead of Bolt's 404.
        self.identity = BotIdentity(token)  # the start's auth.test, for Bolt: none on the ack path
        self.app = build_bolt_app(self.client, secret, self.identity)
        self.interactions = interactions = ClarificationInteractions(gateway, self.sender, self.names.locale)
        self.agent = AgentView(settings, self.sender, interactions.after_the_ack, self.names)
        self.outbound = SlackOutbound(gateway, self.sender, self.live, self.agent)
        self.files = SlackFiles(self.sender, self.outbound.state)
        self.app.event("message")(self._on_message)
        self.app.event("app_mention")(self._on_message)
        self.app.event("member_left_channel")(on_member_left(gateway))  # their questions close
        if self.agent.on:  # without the agent view these stay unhandled: 200 and a count
            self.app.event("app_home_opened")(self.agent.on_home_opened)
            self.app.event("app_context_changed")(self.agent.on_context_changed)
        self.app.action(FEEDBACK_ACTION)(FeedbackClicks(gateway, self.sender).on_click)  # 👍/👎
        interactions.listen(self.app)  # a question's buttons, its modals, then any other click
        self.app.command(re.compile(".*"))(self._on_command)  # any name: /clarigate may be renamed
        self.app.error(self._on_error)
        self._socket: Any = None
        # Socket Mode: an event the store cannot take is left unacked (Bolt's 500): Slack sends it
        # again; one handled as usual may not have reached the store (an ignored or refused
        # message): the store's PING says when an outage is over
        self.outage = StoreOutage(
            lambda: gateway.state.ping(),
            log=log,
            while_down="Slack Socket Mode events are left unacknowledged for Slack to send again",
            when_back="Slack Socket Mode events are acknowledged as usual",
        )

    # --- receiving ----------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """``POST /slack/events`` for the Events API and interactivity (HTTP mode).

        None without a signing secret: nothing could be verified (Socket Mode needs no URL).
        """
        if self.settings.signing_secret is None:
            return []
        endpoint = events_endpoint(self.app, self.settings.signing_secret.get_secret_value())
        return [Route("/slack/events", endpoint, methods=["POST"], name="slack_events")]

    # the Bolt listeners (_on_message, _bare_mention, _prompt, _on_command, _on_error): listeners.py

    async def complete_message(self, message: InboundMessage) -> InboundMessage:
        """The sender's name, the names of the people the message mentions and a command's
        language (``users.info``, cached, one budget for all: ``names.named``) and what Slack
        Connect files are (``files.info``), asked where the job runs: a name not had in time stays
        the user id, a language not had leaves the command's answer to the conversation."""
        if any(a.ref.startswith(FILE_INFO_REF) for a in message.attachments):  # Slack Connect files
            files = [await resolve(a, self.sender.file_info) for a in message.attachments]
            message = message.model_copy(update={"attachments": files})
        return await named(self.names, message)

    async def complete_sender(self, sender: Sender) -> Sender:
        """An answer's sender named where its job runs, as a message's (``names.named_sender``)."""
        return await named_sender(self.names, sender)

    async def known_thread(self, message: InboundMessage) -> bool:
        """A kept reply whose thread has no agent thread is the bot's if a bare mention called it
        in; else it is counted as ignored (``known.py``)."""
        return await self.threads.kept_reply_known(message)

    def command_spelling(self, conversation: Conversation, name: str) -> str:
        """``/clarigate name`` in a classic bot's DM; ``@<bot> name`` in a channel's thread and in an
        agent app's DM, all of whose conversations are threads: slash commands reach no thread
        (``mention_spelling``)."""
        if conversation.is_direct and not self.agent.on:
            return super().command_spelling(conversation, name)
        return mention_spelling(self.bot_name, name)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the bot token with ``auth.test`` and open the Web API's keep-alive session."""
        if self.settings.signing_secret is None and self.settings.app_token is None:
            # Without either, every request Slack sends would be refused: say so now.
            raise SlackStartError(
                "Slack needs SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)"
            )
        identity = await sign_in(self.sender, self.settings.api_url)  # by the start-up retries
        self.identity.signed_in(identity)
        self.bot_user_id = identity.get("user_id")
        self.bot_name = await shown_name(self.names, self.bot_user_id, identity.get("user"))
        if self.client.session is None or self.client.session.closed:
            # slack_sdk opens (and closes) an aiohttp session per call unless given one: one
            # keep-alive session for the adapter's life saves a TCP (and TLS) handshake per call
            timeout = aiohttp.ClientTimeout(total=self.client.timeout)
            self.client.session = aiohttp.ClientSession(timeout=timeout)
        log.info("slack: signed in as %s in %s", identity.get("user"), identity.get("team"))

    async def start_receiving(self) -> None:
        """Socket Mode, when an app token is set (HTTP mode: Slack calls the routes). Its first
        WebSocket URL is asked for here, by the start-up retries: a refused app token stops the
        start (the Socket Mode client would ask again every 10 seconds for good)."""
        if self.settings.app_token is not None:
            app_token = self.settings.app_token.get_secret_value()
            url = await socket_url(self.sender, app_token, self.settings.api_url)
            self._socket = CheckedSocketModeHandler(self.app, app_token)  # envelopes cleaned, checked
            once_is_enough(self._socket.client.logger)
            self._socket.client.wss_uri = url  # connected to as it is: no second apps.connections.open
            await self._socket.connect_async()
            log.info("slack: Socket Mode connected")

    async def idle(self) -> None:
        """Wait until updates that follow answers (sent after the ack) are done."""
        await self.interactions.idle()

    async def connection_up(self) -> bool | None:
        """Socket Mode: whether its WebSocket is connected (None in HTTP mode: nothing to hold open)."""
        if self._socket is None:
            return None
        return bool(await self._socket.client.is_connected())

    async def stop(self) -> None:
        """Close Socket Mode (if any), finish updates in flight, close the client's session."""
        try:
            await asyncio.wait_for(self.idle(), timeout=10)
        except TimeoutError:
            log.warning("slack: gave up waiting for message updates at shutdown")
        await self.agent.close()  # no status kept up past the adapter
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        for client in (self.client, self.ack_client):
            session = getattr(client, "session", None)
            if session is not None and not session.closed:
                await session.close()

    async def check(self) -> list[str]:
        """Configuration problems, for ``doctor``: a way to receive, the bot token and, in Socket
        Mode, the app token taken by Slack (``startup.credential_problems``)."""
        return await credential_problems(self.settings, self.sender)

    # --- sending ----------------------------------------------------------------------------

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item in the conversation's thread; Slack's refusals are raised as
        ``DeliveryFailed`` (``invalid_blocks`` on a question is permanent: the core falls back).
        A message in an agent thread removes its status: a run still at work sets it again."""
        ref = await self.outbound.send(conversation, item)
        self.agent.posted(conversation, item)
        return ref

    def file_limit(self, conversation: Conversation, item: FileReply) -> int:
        """Slack takes files up to 1 GB."""
        return MAX_FILE_BYTES

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        """Upload a file the agent sends and share it in the conversation's thread (``upload.py``)."""
        await self.outbound._clear_working(conversation)  # a "Working…" kept for a reply goes
        await self.files.send(conversation, item)
        self.agent.posted(conversation)
        return None

    async def already_delivered(
        self, conversation: Conversation, item: Outbound, since: float
    ) -> MessageRef | bool | None:
        """Whether the conversation shows ``item`` already (the message that does), read back by
        its delivery id in the messages' metadata (``adapters/slack/readback.py``)."""
        return await readback.already_delivered(self.sender, conversation, item, since)

    # --- live messages (adapters/slack/live.py) ------------------------------------------------

    def live_mode(self, conversation: Conversation) -> str | None:
        """``stream`` (Slack's chat stream) where there is a thread to stream into, else ``edit``
        (a top-level DM: one message posted, then edited)."""
        return STREAM if conversation.reply_to else EDIT

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """About one update a second, slower when many runs of one workspace are live at once
        (``chat.update``'s and ``chat.appendStream``'s limits are per workspace)."""
        return self.live.interval(conversation, mode)

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Create or update the run's live message (a stream, or a message edited). In an agent
        thread the status stands for it while the run has nothing to show but "Working…"."""
        if self.agent.applies(conversation) and (ref is None or is_status(ref)):
            if not view.text and view.status == notice("working_status", view.locale):
                return ref or await self.agent.show_status(conversation, view.locale)
            if ref is not None:  # a step or the first words: the stream takes over from the status
                await self.agent.clear_status(ref)
            ref = None
        return await self.live.show(conversation, view, ref)

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """A shared file's bytes, downloaded with the bot token (``files:read``), size- and type-checked."""
        attachment = await resolve(attachment, self.sender.file_info)  # a Slack Connect file's URL
        if attachment.ref.startswith(FILE_INFO_REF):
            return None  # Slack did not say where it is (logged by resolve)
        return await download(attachment, self._token, self.settings.api_url, max_bytes)
