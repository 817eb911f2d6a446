"""The Slack adapter: Bolt ``AsyncApp`` for receiving, Block Kit for rendering, Web API for sending.

HTTP mode mounts ``POST /slack/events`` (events and interactivity on one URL);
Socket Mode runs when ``settings.app_token`` is set. Listeners finish their fast
work (dedupe + enqueue, ``views.open``) before the ack is returned, so a crash
before the ack makes Slack redeliver instead of losing the message.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, ClassVar

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from starlette.routing import BaseRoute, Route

from agent.protocol import ui_text
from gateway.config import SlackSettings
from gateway.messages import (
    ClarificationClosed,
    ClarificationOut,
    Conversation,
    ErrorReply,
    MessageRef,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from gateway.port import GatewayPort, PlatformAdapter

from .interactions import ClarificationInteractions
from .markup import escape_mrkdwn
from .receive import PLATFORM, events_endpoint, parse_message_event
from .render import (
    ACTION_PREFIX,
    answered_mrkdwn,
    notification_text,
    render_answered,
    render_clarification,
    render_reply,
)
from .send import SlackSender, build_client

log = logging.getLogger(__name__)


class SlackStartError(RuntimeError):
    """Slack refused the configured credentials."""


class SlackAdapter(PlatformAdapter):
    """Slack through Bolt: ``SlackAdapter(settings, gateway)``."""

    platform: ClassVar[str] = PLATFORM

    def __init__(self, settings: SlackSettings, gateway: GatewayPort, *, retry_backoff: float = 0.5) -> None:
        self.settings = settings
        self.gateway = gateway
        if settings.bot_token is None:
            raise ValueError("Slack needs SLACK_BOT_TOKEN (the app's xoxb- bot token)")
        token = settings.bot_token.get_secret_value()
        secret = settings.signing_secret.get_secret_value() if settings.signing_secret else ""
        self.client = build_client(token, settings.api_url, backoff_factor=retry_backoff)
        self.sender = SlackSender(self.client)
        self.bot_user_id: str | None = None
        # Work before ack: an exception answers 500 and Slack redelivers (deduped by id).
        self.app = AsyncApp(
            client=self.client,
            signing_secret=secret,
            process_before_response=True,
            name="clarigate",
        )
        self.interactions = interactions = ClarificationInteractions(gateway, self.sender)
        self.app.event("message")(self._on_message)
        self.app.event("app_mention")(self._on_message)
        self.app.action(re.compile("^" + re.escape(ACTION_PREFIX)))(interactions.on_action)
        self.app.view(re.compile("^" + re.escape(ACTION_PREFIX)))(interactions.on_submission)
        self._socket: Any = None

    # --- receiving ----------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """``POST /slack/events`` for the Events API and interactivity (HTTP mode).

        None without a signing secret: nothing could be verified (Socket Mode needs no URL).
        """
        if self.settings.signing_secret is None:
            return []
        endpoint = events_endpoint(self.app, self.settings.signing_secret.get_secret_value())
        return [Route("/slack/events", endpoint, methods=["POST"], name="slack_events")]

    async def _on_message(self, body: dict[str, Any], context: dict[str, Any]) -> None:
        bot_user_id = context.get("bot_user_id") or self.bot_user_id
        parsed = parse_message_event(body, bot_user_id)
        if parsed is None:
            return
        if parsed.needs_known_thread and not await self.gateway.knows_conversation(
            parsed.message.conversation
        ):
            return
        await self.gateway.accept(parsed.message)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the bot token with ``auth.test``; start Socket Mode when an app token is set."""
        if self.settings.signing_secret is None and self.settings.app_token is None:
            # Without either, every request Slack sends would be refused: say so now.
            raise SlackStartError(
                "Slack needs SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode)"
            )
        try:
            identity = await self.sender.whoami()
        except SlackApiError as error:
            reason = error.response.get("error") if error.response is not None else str(error)
            raise SlackStartError(
                f"Slack rejected SLACK_BOT_TOKEN ({reason}): check the bot token of the installed app"
            ) from error
        except OSError as error:
            raise SlackStartError(f"Slack API unreachable at {self.settings.api_url}: {error}") from error
        self.bot_user_id = identity.get("user_id")
        log.info("slack: signed in as %s in %s", identity.get("user"), identity.get("team"))
        if self.settings.app_token is not None:
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            self._socket = AsyncSocketModeHandler(self.app, self.settings.app_token.get_secret_value())
            await self._socket.connect_async()
            log.info("slack: Socket Mode connected")

    async def idle(self) -> None:
        """Wait until updates that follow answers (sent after the ack) are done."""
        await self.interactions.idle()

    async def stop(self) -> None:
        """Close Socket Mode (if any), finish updates in flight, close the client's session."""
        try:
            await asyncio.wait_for(self.idle(), timeout=10)
        except TimeoutError:
            log.warning("slack: gave up waiting for message updates at shutdown")
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        session = getattr(self.client, "session", None)
        if session is not None and not session.closed:
            await session.close()

    async def check(self) -> list[str]:
        """Configuration problems, for ``doctor``."""
        problems = []
        if self.settings.signing_secret is None and self.settings.app_token is None:
            problems.append("SLACK_SIGNING_SECRET is not set (needed for HTTP mode; or set SLACK_APP_TOKEN)")
        if not problems:
            try:
                await self.sender.whoami()
            except SlackApiError as error:
                problems.append(f"Slack rejected SLACK_BOT_TOKEN: {error.response.get('error')}")
            except OSError as error:
                problems.append(f"Slack API unreachable at {self.settings.api_url}: {error}")
        return problems

    # --- sending ----------------------------------------------------------------------------

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item in the conversation's thread."""
        channel, thread = conversation.chat_id, conversation.reply_to
        if isinstance(item, TextReply):
            ts = ""
            for chunk in render_reply(item.text):
                ts = await self.sender.post(channel, chunk, thread_ts=thread)
            return self._ref(channel, ts, thread)
        if isinstance(item, ClarificationOut):
            blocks = render_clarification(item)
            ts = await self.sender.post(channel, notification_text(item.request.question), blocks, thread)
            return self._ref(channel, ts, thread)
        if isinstance(item, ClarificationClosed):
            ref = item.view.message_ref
            if ref is None:
                return None
            line = answered_mrkdwn(item.view, item.answered_line)
            await self.sender.update(
                ref.chat_id, ref.message_id, line, render_answered(item.view.request, line)
            )
            return ref
        if isinstance(item, ProgressUpdate):
            return await self._progress(channel, thread, item)
        if isinstance(item, ErrorReply):
            ts = await self.sender.post(channel, "⚠️ " + escape_mrkdwn(item.text), thread_ts=thread)
            return self._ref(channel, ts, thread)
        return None

    async def _progress(self, channel: str, thread: str | None, item: ProgressUpdate) -> MessageRef | None:
        """A "Working…" message while the agent runs, deleted once it is done."""
        if item.state == "started":
            ts = await self.sender.post(
                channel, "⏳ _" + ui_text("working", item.locale) + "_", thread_ts=thread
            )
            return self._ref(channel, ts, thread)
        if item.ref is not None:
            try:
                await self.sender.delete(item.ref.chat_id, item.ref.message_id)
            except SlackApiError as error:  # already gone: nothing left to tidy
                log.info("slack: could not delete the progress message: %s", error.response.get("error"))
        return None

    @staticmethod
    def _ref(channel: str, ts: str, thread: str | None) -> MessageRef:
        return MessageRef(
            platform=PLATFORM, chat_id=channel, message_id=ts, extra={"thread_ts": thread} if thread else {}
        )
