"""The Slack adapter's Bolt listeners (mixed into ``SlackAdapter``): messages and mentions,
slash commands, and the requests no listener wants or Bolt cannot route (``_on_error``).

A bare mention ("@clarigate" alone) gets a short prompt in the thread, once per message
whichever replica Slack redelivers it to (a lease in the store).
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from clarigate.agent.protocol import ui_text
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.boundary.messages import AcceptOutcome, InboundMessage
from clarigate.gateway.flow.notices import language_hint, text_locale

from .commands import command_hint, mention_command, parse_command
from .decode import unlabeled_channel_ids, unlabeled_group_ids
from .edits import deleted_event_id
from .receive import (
    FAILURE,
    PLATFORM,
    bolt_choked,
    cannot_route,
    count_ignored,
    is_last_retry,
    parse_message_event,
    request_kind,
)
from .respond import may_respond, remember
from .shared import mentioned_in
from .socket_mode import not_acked

if TYPE_CHECKING:
    from clarigate.gateway.boundary.outage import StoreOutage
    from clarigate.gateway.boundary.port import GatewayPort

    from .agent_view import AgentView
    from .interactions import ClarificationInteractions
    from .known import KnownThreads
    from .names import PeopleBook
    from .send import SlackSender
    from .settings import SlackSettings

log = logging.getLogger("clarigate.adapters.slack.adapter")  # the adapter's lines, as before the split

PROMPT_DEDUPE_SECONDS = 3600  # Slack retries an event for a few minutes at most


class SlackListeners:
    """The adapter's Bolt listeners (mixed into ``SlackAdapter``, which registers them)."""

    settings: SlackSettings
    gateway: GatewayPort
    sender: SlackSender
    names: PeopleBook
    bot_user_id: str | None
    threads: KnownThreads
    interactions: ClarificationInteractions
    agent: AgentView
    outage: StoreOutage

    async def _on_message(
        self, body: dict[str, Any], context: dict[str, Any], request: AsyncBoltRequest
    ) -> None:
        bot_user_id = context.get("bot_user_id") or self.bot_user_id
        if (deleted := deleted_event_id(body["event"])) is not None:  # not run if not started yet
            await self.gateway.withdraw(PLATFORM, deleted)
        parsed = parse_message_event(body, bot_user_id, agent_view=self.agent.on)
        last = is_last_retry(request.headers)
        message = None if parsed is None else await self.threads.for_the_bot(parsed, last)
        if parsed is None or message is None:
            # edits, bots, joins, channel chatter outside the bot's threads: acknowledged, counted
            event = body["event"]
            log.debug("slack: %s/%s acknowledged, not for the bot", event.get("type"), event.get("subtype"))
            count_ignored(request_kind(body))
            return
        people = [u for u in mentioned_in(body["event"]) if u != bot_user_id]  # shared messages' too
        text = str(body["event"].get("text") or "")
        people += unlabeled_channel_ids(text) + unlabeled_group_ids(text)  # <#C1|>, <!subteam^S1>: alike
        if people:  # names known already; the others are asked for after the ack (complete_message)
            known = self.names.known(people)
            again = (parse_message_event(body, bot_user_id, known, self.agent.on) or parsed).message
            said = "\n".join([again.text, *(a.name for a in again.attachments)])
            unnamed = tuple(u for u in people if u not in known and (f"@{u}" in said or f"#{u}" in said))
            named_now = {"text": again.text, "attachments": again.attachments, "unnamed_mentions": unnamed}
            message = message.model_copy(update=named_now)
        if message.is_mention and not message.text.strip() and not message.attachments:
            await self._bare_mention(message)
            return
        command = mention_command(message.text) if message.is_mention else None
        if command is not None:  # "@clarigate cancel": the thread's own command
            message = message.model_copy(update={"text": command})
        if await self.gateway.accept(message) is AcceptOutcome.ACCEPTED:
            self.agent.title_thread(message)
        await self.outage.answered()  # handled: an outage (if any) is over once PING answers

    async def _bare_mention(self, message: InboundMessage) -> None:
        """ "@clarigate" alone: a short prompt in the thread, which the bot now takes part in.

        The core sees it first: it ignores an empty message from someone allowed, and refuses
        (once) someone its allow-lists keep out, who then gets no prompt.
        """
        if await self.gateway.accept(message) is not AcceptOutcome.IGNORED:
            return
        conv = message.conversation
        await self.threads.called_in(conv)
        # Slack redelivers unacknowledged events: one prompt per message, whichever replica.
        first = await self.gateway.state.acquire_lease(
            f"prompt:{message.event_id}", uuid.uuid4().hex, PROMPT_DEDUPE_SECONDS
        )
        if first:
            self.interactions.after_the_ack(self._prompt(message))

    async def _prompt(self, message: InboundMessage) -> None:
        """A bare mention's prompt, in the person's Slack language (``users.info``), else English."""
        conv = message.conversation
        locale = language_hint(await self.names.locale(message.sender.user_id)) or "en"
        prompt = ui_text("mention_prompt" if conv.reply_to else "mention_prompt_direct", locale)
        await self.sender.post(conv.chat_id, prompt, thread_ts=conv.reply_to)

    async def _on_command(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """``/clarigate new|cancel|help|status``: in a classic bot's DM the neutral command, handled
        by the core; in a channel or an agent app's DM, whose conversations are threads the command
        does not name, a private hint and nothing else (the ack's text is shown to that person only)."""
        message = parse_command(body, self.agent.on)
        if message is None:
            await self._command_hint(ack, body)
            return
        # kept for the reply, which goes through it where the bot is not a member of the DM
        await remember(getattr(self.gateway, "state", None), body, message, self.settings.api_url)
        await self.gateway.accept(message)
        await self.outage.answered()
        await ack()

    async def _command_hint(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """A slash command's private hint in the person's language: in the ack when its words or
        the person's Slack language known already tell it; else the ack says nothing (no lookup
        holds it back) and the hint follows through the command's ``response_url`` once
        ``users.info`` (``PeopleBook.locale``, kept an hour) tells it, English when it does not."""
        user, url = str(body.get("user_id") or ""), str(body.get("response_url") or "")
        language = self.names.known_locale(user)
        told = language or text_locale(f"/{str(body.get('text') or '').strip()}")
        asking = user and self.names.will_know_locale(user) and may_respond(url, self.settings.api_url)
        if told or not asking:
            await ack(
                text=command_hint(body, self.bot_user_id, self.agent.on, language), response_type="ephemeral"
            )
            return
        await ack()
        self.interactions.after_the_ack(self._hint_later(body, user, url))

    async def _hint_later(self, body: dict[str, Any], user: str, url: str) -> None:
        """``_command_hint``'s hint after the ack, in the language ``users.info`` gives."""
        language = await self.names.locale(user)
        await self.sender.respond(url, command_hint(body, self.bot_user_id, self.agent.on, language))

    async def _on_error(
        self, error: Exception, body: dict[str, Any], request: AsyncBoltRequest
    ) -> BoltResponse | None:
        """Requests no listener wants get 200 (logged at debug, counted). A payload Bolt chokes
        on while routing it is a bad request (400; in Socket Mode acknowledged with a warning, as
        it would only come again); a listener's own failure keeps Bolt's 500, so Slack redelivers
        and the dedupe keeps it to one run. Over HTTP both are left for the endpoint to raise (the
        server logs them once: a line, or the traceback); in Socket Mode a failure is logged here:
        the store unreachable as one line per outage (the envelope stays unacknowledged, so
        Slack sends the event again), anything else with its traceback."""
        if isinstance(error, BoltUnhandledRequestError):
            kind = request_kind(body)
            log.debug("slack: %s acknowledged, nothing to do", kind)
            count_ignored(kind)
            return BoltResponse(status=200, body="")
        failure: Exception = error
        if bolt_choked(error, error.__traceback__):
            failure = cannot_route(body, error)
        if request.mode == "http":
            request.context[FAILURE] = failure
        elif isinstance(failure, BadRequest):  # acknowledged: unacked, Slack would only send it again
            log.warning("slack: %s, acknowledged", failure.reason)
            return BoltResponse(status=200, body="")
        elif self.outage.met(f"slack: a {request_kind(body)} envelope left unacknowledged", failure):
            return not_acked()  # Bolt's own line for it is left out (``socket_mode``)
        else:
            log.error("slack: a listener failed", exc_info=error)
        return BoltResponse(status=400, body="") if isinstance(failure, BadRequest) else None
