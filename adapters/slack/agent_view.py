"""Slack's agent messaging experience (``slack.agent_view: true``, ``features.agent_view`` in the
app manifest): the agent's own container in Slack.

Each conversation with the agent is a thread of the person's DM with the app. While a run works
the thread shows a status ("clarigate is working on it…") rotating the catalog's loading messages
(``assistant.threads.setStatus``), cleared when the reply or the question arrives; a run that
streams shows its stream instead once there is something to show (a tool step, the first
words). Slack removes a status after two minutes without a message and as soon as the app posts
one in the thread, so a run's status is set again every ``RENEW_EVERY`` seconds while it stands
for the run, and at once after the bot's own notice there (``I am still working…``): one call a
run every 90 s, far below ``setStatus``'s limit, stopped when the status is cleared. Each setting
sends the loading messages one further on (``rotated``): Slack shows a new list from its first
message, so a long run would otherwise see the first one again at every renewal.

A new thread is titled from its first request (``assistant.threads.setTitle``) as the agent
reads it, people named (``@Li``, looked up after the ack as for the agent: ``names.py``); a
command (``@clarigate help``) is no request and titles nothing. Opening the agent
(``app_home_opened`` in its ``messages`` tab) offers up to four suggested prompts, the bot's
``slack.suggested_prompts`` in the person's Slack language, else the catalog's
(``assistant.threads.setSuggestedPrompts``, without ``thread_ts``: an agent app's call naming one
is ignored by Slack without an error).

``app_context_changed`` says what the person is looking at in Slack (a channel, a canvas): it is
acknowledged and not passed to the agent, which would otherwise learn which channels a person
opens without reading access to them.

These calls decorate the conversation: one that fails is logged and counted (``send.py``) and
changes nothing else; the reply is delivered all the same.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.graphemes import shorten
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageRef
from clarigate.gateway.boundary.outbound_items import ClarificationOut, ErrorReply, Outbound, TextReply
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.flow.commands import parse_command
from clarigate.gateway.flow.notices import language_hint

from .decode import name_mentions
from .names import PeopleBook
from .receive import PLATFORM
from .send import SlackSender
from .settings import SlackSettings, SuggestedPrompt, in_locale

log = logging.getLogger(__name__)

#: ``MessageRef.extra["live"]`` of a thread that shows the status, not a message.
STATUS = "status"
#: Slack rotates ten loading messages at most.
MAX_LOADING_MESSAGES = 10
#: Seconds between settings of a status while its run works: Slack removes one after two minutes
#: "if no message has been sent" (``assistant.threads.setStatus``).
RENEW_EVERY = 90.0
#: Renewals stop after this many seconds whatever happens (a run whose end this process never
#: delivers); runs are stopped long before (``run_timeout_seconds``, 600 s by default).
RENEW_FOR = 3 * 3600.0
#: A thread's title: its first request's first line, cut to this many characters.
TITLE_CHARS = 60
#: A code block's opening or closing line (```` ``` ````, ```` ```python ````): no title.
_FENCE = re.compile(r"`{3}[\w+#.-]*")
#: A letter or a digit, in any script: a line with words.
_WORD = re.compile(r"[^\W_]")


def loading_messages(locale: Locale) -> list[str]:
    """The catalog's loading messages in ``locale``, one a line."""
    lines = ui_text("slack_loading", locale).splitlines()
    return [line.strip() for line in lines if line.strip()][:MAX_LOADING_MESSAGES]


def rotated(messages: list[str], turn: int) -> list[str]:
    """``messages`` starting ``turn`` messages further on, round again past the last: the
    ``turn``-th setting of a status goes on from where the one before it started."""
    if not messages:
        return messages
    start = turn % len(messages)
    return messages[start:] + messages[:start]


def thread_title(text: str) -> str:
    """A thread's title from its first request: the first line that has words (a code block's
    fence or a rule has none), else its first line, cut short."""
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not _FENCE.fullmatch(line)]
    line = next((line for line in lines if _WORD.search(line)), lines[0] if lines else "")
    return shorten(line, TITLE_CHARS, strip=True)  # never inside a character as shown


def prompt_payloads(prompts: list[SuggestedPrompt], locale: Locale) -> list[dict[str, str]]:
    """``slack.suggested_prompts`` as Slack takes them (``title``, ``message``) in ``locale``; the
    catalog's prompt when the YAML names none."""
    if not prompts:
        return [
            {
                "title": ui_text("slack_prompt_title", locale),
                "message": ui_text("slack_prompt_message", locale),
            }
        ]
    return [{"title": in_locale(p.title, locale), "message": in_locale(p.message, locale)} for p in prompts]


def status_ref(conversation: Conversation) -> MessageRef:
    """The reference a run's status stands on: its thread (no message of its own)."""
    thread = conversation.reply_to or ""
    return MessageRef(
        platform=PLATFORM,
        chat_id=conversation.chat_id,
        message_id=thread,
        extra={"thread_ts": thread, "live": STATUS},
    )


def posts_a_message(item: Outbound) -> bool:
    """True for an item delivered as a new message in the thread (``outbound.py``)."""
    if isinstance(item, (TextReply, ErrorReply)):
        return item.private_to is None
    return isinstance(item, ClarificationOut)


def is_status(ref: MessageRef | None) -> TypeGuard[MessageRef]:
    """True for the reference of a status (``status_ref``)."""
    return ref is not None and ref.extra.get("live") == STATUS


@dataclass
class ShownStatus:
    """A status standing for a running run: set again by ``task`` until ``stop`` is set; ``wake``
    makes it set again now (a message of the bot's removed it)."""

    channel: str
    thread: str
    locale: Locale
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    sets: int = 0  # how many times it was set: where its loading messages go on from


class AgentView:
    """The agent view's calls: status, title, suggested prompts; off unless ``slack.agent_view``."""

    def __init__(
        self,
        settings: SlackSettings,
        sender: SlackSender,
        after_the_ack: Callable[[Awaitable[Any]], None],
        people: PeopleBook,
    ) -> None:
        self.on = settings.agent_view
        self.prompts = settings.suggested_prompts
        self.sender = sender
        self.after_the_ack = after_the_ack
        self.people = people  # names for titles, a person's Slack language (None if not had)
        self.renew_every = RENEW_EVERY
        self._shown: dict[tuple[str, str], ShownStatus] = {}  # statuses of runs at work, by thread

    def applies(self, conversation: Conversation) -> bool:
        """True for a conversation the agent view shows: a thread of a DM, the view on."""
        return self.on and conversation.is_direct and bool(conversation.reply_to)

    # --- a run's status ------------------------------------------------------------------------

    async def show_status(self, conversation: Conversation, locale: Locale) -> MessageRef:
        """The thread's status while a run works, with the loading messages in ``locale``, kept
        up until ``clear_status`` (Slack's two minute timeout: module docstring)."""
        ref = status_ref(conversation)
        await self._stop_renewing(ref.chat_id, ref.message_id)  # an earlier run's, were it left
        shown = ShownStatus(ref.chat_id, ref.message_id, locale)
        await self._set(shown)
        shown.task = asyncio.create_task(self._renew(shown), name="slack-status-renewal")
        self._shown[(shown.channel, shown.thread)] = shown
        return ref

    async def clear_status(self, ref: MessageRef) -> None:
        """Clear the status of ``ref``'s thread (the reply or the question is on its way)."""
        await self._stop_renewing(ref.chat_id, ref.message_id)
        await self._quietly("clear the status", self.sender.set_status(ref.chat_id, ref.message_id, ""))

    def posted(self, conversation: Conversation, item: Outbound | None = None) -> None:
        """The bot posted ``item`` (a file when None) in the conversation's thread, which removes
        its status in Slack: a run still at work there has it set again. A private note, a
        progress update or an edit posts no message in the thread and changes nothing."""
        if item is not None and not posts_a_message(item):
            return
        shown = self._shown.get((conversation.chat_id, conversation.reply_to or ""))
        if shown is not None:
            shown.wake.set()

    async def close(self) -> None:
        """Stop every renewal (the adapter stops)."""
        for channel, thread in list(self._shown):
            await self._stop_renewing(channel, thread)

    async def _set(self, shown: ShownStatus) -> None:
        status, loading = ui_text("slack_status", shown.locale), loading_messages(shown.locale)
        loading, shown.sets = rotated(loading, shown.sets), shown.sets + 1  # not from the first again
        await self._quietly(
            "set the status", self.sender.set_status(shown.channel, shown.thread, status, loading)
        )

    async def _renew(self, shown: ShownStatus) -> None:
        """Set the status again every ``renew_every`` seconds or when woken, until stopped; all
        its calls made here, so none is in flight once ``_stop_renewing`` returns."""
        deadline = asyncio.get_running_loop().time() + RENEW_FOR
        while asyncio.get_running_loop().time() < deadline:
            try:
                await asyncio.wait_for(shown.wake.wait(), self.renew_every)
            except TimeoutError:
                pass  # two minutes near: set it again before Slack removes it
            if shown.stop.is_set():
                return
            shown.wake.clear()
            await self._set(shown)

    async def _stop_renewing(self, channel: str, thread: str) -> None:
        shown = self._shown.pop((channel, thread), None)
        if shown is None or shown.task is None:
            return
        shown.stop.set()
        shown.wake.set()
        (failed,) = await asyncio.gather(shown.task, return_exceptions=True)
        if isinstance(failed, Exception):
            log.warning("slack: renewing the status of an agent thread failed: %r", failed)

    # --- events --------------------------------------------------------------------------------

    def title_thread(self, message: InboundMessage) -> None:
        """Title a new agent thread from its first request (after the ack); a command (``/help``,
        ``@clarigate help`` as it reaches the core) is not one."""
        conversation = message.conversation
        if not self.applies(conversation) or message.message_id != conversation.topic:
            return  # a reply inside a thread that has its title already
        if parse_command(message.text) is None:
            self.after_the_ack(self._title(message))

    async def _title(self, message: InboundMessage) -> None:
        """The title as the agent reads the request: people named as ``complete_message`` names
        them (the same lookups, shared by ``PeopleBook``), an id where a name is not had in time."""
        text = message.text
        if message.unnamed_mentions:
            text = name_mentions(text, await self.people.names(list(message.unnamed_mentions)))
        title = thread_title(text)
        if title:
            conversation = message.conversation
            call = self.sender.set_title(conversation.chat_id, conversation.reply_to or "", title)
            await self._quietly("title the thread", call)

    async def on_home_opened(self, body: dict[str, Any]) -> None:
        """The person opened the agent (its ``messages`` tab): offer the suggested prompts."""
        event = body.get("event") or {}
        channel, user = event.get("channel"), event.get("user")
        if event.get("tab") != "messages" or not isinstance(channel, str) or not isinstance(user, str):
            return  # the Home tab (clarigate publishes none), or an event without its channel
        self.after_the_ack(self._offer_prompts(channel, user))

    async def on_context_changed(self, body: dict[str, Any]) -> None:
        """What the person looks at changed: acknowledged, not told to the agent (module docstring)."""
        entities = ((body.get("event") or {}).get("context") or {}).get("entities") or []
        log.debug("slack: the agent view's context changed (%d entities), not passed on", len(entities))

    async def _offer_prompts(self, channel: str, user: str) -> None:
        locale = language_hint(await self.people.locale(user)) or "en"  # English when not had
        prompts = prompt_payloads(self.prompts, locale)
        title = ui_text("slack_prompts_title", locale)
        await self._quietly(
            "set the suggested prompts", self.sender.set_suggested_prompts(channel, prompts, title)
        )

    @staticmethod
    async def _quietly(what: str, call: Awaitable[None]) -> None:
        try:
            await call
        except DeliveryFailed as error:
            log.info("slack: could not %s of an agent thread: %s", what, error.code)
