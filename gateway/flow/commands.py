"""Conversation control: ``/new``, ``/cancel``, ``/help``, ``/status``, ``/start``, for every platform.

Adapters map their platform's command syntax onto these neutral texts (``clarigate.gateway.boundary.port``);
the core handles them here, never as answers and never as requests to the agent.

Where each runs: ``/new`` takes its turn with the chat thread's other messages (everything sent
before it is answered first, then the old thread is left and its open question closed).
``/cancel``, ``/help``, ``/status`` and ``/start`` run out of turn, in the chat thread's own
control lane (``CONTROL_LANE``), so they answer at once even while a long run is going: a
durable, deduplicated job like any message, that never waits behind the agent. (A ``/cancel`` of
a graph's own interrupt promises nothing about going on, ``may_refuse_decline``: its follow-up run
says when the task stopped, ``stopped_words``.) A ``/cancel`` run late (held by a worker that died)
closes only a question asked before it was sent: a newer one stays open, and the person is told.
With no question open, ``/cancel`` stops the chat thread's run in progress (``flow.stops``); so
it does where the open question is someone else's (``answer_policy`` ``starter``): the sender's own
run or waiting messages stop, and only with none is the sender told whose question it is.

Closing a question without an answer (a Cancel button, ``/cancel``, a new message typed
instead of an answer, ``/new``) claims it with a ``declined`` answer (``answer_declined``),
so it closes exactly once and for everyone, whoever closes it first (``flow.closing``). The
replies follow the conversation's language (``flow.conversation_locale``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from clarigate.agent.protocol.catalog.command_words import aliases_line, command_alias
from clarigate.agent.protocol.coerce import cut, one_line
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Notice, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import Outbound, TextReply
from clarigate.gateway.flow.answers import policy_refusal, view_of
from clarigate.gateway.flow.attachments import shown_names
from clarigate.gateway.flow.closing import QuestionClosing, may_refuse_decline
from clarigate.gateway.flow.conversation_locale import ConversationLocale, command_locale
from clarigate.gateway.flow.notices import (
    COMMAND_SLASHES,
    age_text,
    notice,
)
from clarigate.gateway.flow.stops import StopOutcome, stops_of
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE, describe, route_for
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import thread_started_at
from clarigate.gateway.store.records import PendingRecord

log = logging.getLogger(__name__)

#: The neutral commands, in the order ``/help`` lists them (``start`` greets and is not listed).
COMMANDS = ("new", "cancel", "status", "help", "start")
#: Appended to a chat thread's key: the order key of its out-of-turn commands.
CONTROL_LANE = "#control"
#: How much of a question ``/status`` and ``/cancel`` quote.
QUOTE_CHARS = 120

Reply = Callable[[Outbound], Awaitable[Any]]


@dataclass(frozen=True)
class Command:
    """A neutral command: its name (``new``, ``cancel``, …) and the words after it."""

    name: str
    words: str = ""

    @property
    def in_turn(self) -> bool:
        """True when the command waits for the messages before it (``/new``); else it runs at once."""
        return self.name == "new"


#: Sentence punctuation a command may end with (``/cancel。``, ``/new!``): not part of its name.
TRAILING_PUNCTUATION = ".!?。！？…"


def parse_command(text: str) -> Command | None:
    """The command ``text`` is, or None: ``/name``, optionally ``@botname``, then any words.

    A full-width slash (``／``, typed by Chinese input methods) counts too, and so does sentence
    punctuation right after the name (``/cancel。``, ``/new!``), and its other names (``command_words``).
    An unknown ``/word`` (``/取消订单``) is not a command: it goes to the agent like any message.
    """
    stripped = text.strip()
    if len(stripped) < 2 or stripped[0] not in COMMAND_SLASHES or stripped[1].isspace():
        return None
    head, *rest = stripped[1:].split(maxsplit=1)  # the words after any space: "\n", "\t", "　"
    name = head.split("@", 1)[0].lower().rstrip(TRAILING_PUNCTUATION)
    name = command_alias(name) or name  # another name of it (``/reset``, ``/取消``: the catalog's)
    if name not in COMMANDS:
        return None
    return Command(name, "".join(rest))


def help_text(
    locale: Locale, spell: Callable[[str], str], extra: tuple[str, ...] = (), intro: str | None = None
) -> str:
    """``/help``'s text: how to talk to the bot (``intro``, else the catalog's ``help``), then each
    command as ``spell`` writes it and its catalog description (``cmd_<name>``), the same words on
    every platform; ``extra`` names more commands a surface has (the terminal's ``quit``)."""
    listed = [name for name in COMMANDS if name != "start"] + list(extra)
    lines = [intro or notice("help", locale), "", notice("commands", locale)]
    lines += [f"{spell(name)} — {notice(f'cmd_{name}', locale)}" for name in listed]
    lines += aliases_line(locale, spell, extra)  # in Chinese: the Chinese names (``/取消``)
    return "\n".join(lines)


def agent_here(config: GatewayConfig, conv: Conversation, locale: Locale) -> dict[str, str]:
    """The agent that answers ``conv``: its route's name and what it is in ``locale``'s words
    (``runtime.routes``)."""
    route = route_for(config.routes, conv.platform, conv.chat_id, conv.chat_type)
    if route is None:
        return {"agent": DEFAULT_ROUTE, "what": describe(config.agent, locale)}
    return {"agent": route.name, "what": describe(route.options(config.agent), locale)}


def quote(text: str) -> str:
    """A question as ``/status`` and ``/cancel`` quote it: one line, cut."""
    return cut(one_line(text), QUOTE_CHARS)


class Control(ConversationLocale, QuestionClosing):
    """Runs the commands and closes questions without an answer.

    The conversation's language (``locale_of``, ``remember_locale``, ``written_locale``) is
    ``ConversationLocale``'s; closing a question (``close_question``) is ``QuestionClosing``'s.
    """

    def __init__(
        self,
        config: GatewayConfig,
        store: Store,
        outbox: Outbox,
        track: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.outbox = outbox
        self.track = track  # told the inbound id of each follow-up run it enqueues (``Gateway.drain``)
        self.stops = stops_of(store)  # the runs going on in this process (``flow.stops``)

    async def handle(self, command: Command, msg: InboundMessage, reply: Reply) -> None:
        """Run ``command`` written in ``msg``; ``reply`` sends the answer it gets. A photo or file
        sent with it (a caption's command) goes on after ``/new`` as the new conversation's first
        message (``Dispatcher``); any other command passes it on no more than the words after it,
        and says so."""
        conv = msg.conversation
        if command.name == "new":
            await self._new(command, msg, reply)
            return
        status = await self.store.chat_status(conv.thread_key)
        locale = command_locale(msg, command, status.pending, await self.written_locale(msg))
        pending, outstanding = status.pending, status.outstanding
        if command.name == "cancel":
            item = await self._cancel(msg, pending, outstanding, locale)
        elif command.name == "status":
            item = TextReply(text=self._status(msg, status.thread_id, pending, outstanding, locale))
        else:
            greeting = [notice("greeting", locale)] if command.name == "start" else []
            item = TextReply(text="\n\n".join([*greeting, self.help_text(conv, locale)]))
        if item is not None:
            await reply(item)
        if msg.attachments:  # passed on no more than the words after the command: the person knows
            names = shown_names(msg.attachments, locale)
            await reply(TextReply(text=notice("attachments_not_sent", locale, names=names)))

    # --- the commands ---------------------------------------------------------------------------

    async def _new(self, command: Command, msg: InboundMessage, reply: Reply) -> None:
        _, _, pending = await self.restart(msg.conversation.thread_key, msg.sender)
        locale = command_locale(msg, command, pending, await self.written_locale(msg))
        await reply(TextReply(text=notice("new_thread", locale)))

    async def restart(self, thread_key: str, sender: Sender) -> tuple[str, str, PendingRecord | None]:
        """Start a chat thread over (``/new``; ``clarigate admin reset-thread``): the old agent thread,
        the new one, and the open question closed (None when there was none)."""
        ttl = self.config.thread_ttl_seconds
        old_thread, pending = await self.store.thread_with_pending(thread_key, ttl)
        thread_id = await self.store.new_thread_for_chat(thread_key, ttl)
        log.info("started a new agent thread %s", thread_id)
        # the thread left behind is deleted from the checkpointer after the retention period
        retire_at = time.time() + self.config.thread_retention_seconds
        await self.store.schedule_thread_cleanup(old_thread, retire_at)
        if pending is not None:
            # its clicks would run on the old thread: closed now, and any later click on an older
            # question of the old thread is refused as "restarted" (``Gateway.submit_answer``)
            await self.close_question(pending, sender, "restarted")
        return old_thread, thread_id, pending

    async def _cancel(
        self, msg: InboundMessage, pending: PendingRecord | None, outstanding: int, locale: Locale
    ) -> TextReply | None:
        if pending is None or pending.expires_at <= time.time():  # the thread's run, if any, stops
            return (await self.stops.stop(msg, outstanding, locale, self.config.answer_policy)).reply
        if msg.received_at < pending.created_at:  # asked after the /cancel was sent (it ran late)
            cancel, question = self.syntax(msg.conversation, "cancel"), quote(pending.request.question)
            return TextReply(text=notice("cancel_came_late", locale, cancel=cancel, question=question))
        if policy_refusal(pending, view_of(pending), msg.sender) is not None:
            return await self._cancel_not_yours(msg, pending, outstanding, locale)
        # its follow-up run answers in the command's language, as this reply does (``/取消``: Chinese)
        claim = await self.close_question(pending, msg.sender, "cancelled", msg.inbound_id, locale)
        if claim.status != "claimed":  # answered (or cancelled) a moment ago by someone else
            return TextReply(text=notice("nothing_to_cancel", locale))
        # a graph's own interrupt may refuse the declined answer (a ``response_schema``): no promise
        # to go on, its follow-up run says when the task stopped (``stopped_words``)
        key = "cancelled_interrupt" if may_refuse_decline(pending) else "cancelled"
        return TextReply(text=notice(key, locale, question=quote(pending.request.question)))

    async def _cancel_not_yours(
        self, msg: InboundMessage, pending: PendingRecord, outstanding: int, locale: Locale
    ) -> TextReply | None:
        """``/cancel`` of someone else's question in a shared conversation: it stays open for its
        asker, but the sender's own run or waiting messages are theirs to stop (as with no question
        open, ``flow.stops``: their run's own "stopped" line answers); only with nothing of theirs
        to stop are they told, privately and once each, whose question it is and, when the run
        going on is someone else's too, whose run (``RunStops._refusal``): both in one line at first."""
        stopped = await self.stops.stop(msg, outstanding, locale, self.config.answer_policy)
        if stopped.outcome in (StopOutcome.STOPPING, StopOutcome.WITHDRAWN):
            return stopped.reply  # their run stops (its own line answers), or their waiting messages
        assert pending.asked_by is not None  # a refusal names who asked
        refused = Notice.of("cancel_not_yours", locale, who=pending.asked_by)
        question_note = await self.private_note(pending, msg.sender, refused)
        run_note = stopped.reply if stopped.outcome is StopOutcome.NOT_YOURS else None
        if question_note is None or run_note is None or run_note.notice is None:
            return question_note or run_note  # each note once per thing: the one not said before
        runner = run_note.notice.people["who"]  # both said for the first time: in one line
        both = Notice.of("cancel_neither_yours", locale, asker=pending.asked_by, runner=runner)
        return TextReply(text=both.text, private_to=msg.sender, notice=both)

    async def private_note(self, record: PendingRecord, sender: Sender, note: Notice) -> TextReply | None:
        """A note about ``record`` for ``sender`` only, once per question and person (None after
        the first: where a platform cannot show a line to one member only, it is a reply the group
        sees, so it is never repeated on every message); its parts go with it (``Notice``)."""
        once = f"private-note:{record.request_id}:{sender.user_id}"
        if not await self.store.first_time(once, max(int(record.expires_at - time.time()), 1)):
            log.info(
                "a note about %s for %s was shown already: not repeated", record.request_id, sender.user_id
            )
            return None
        return TextReply(text=note.text, private_to=sender, notice=note)

    def _status(
        self,
        msg: InboundMessage,
        thread_id: str | None,
        pending: PendingRecord | None,
        outstanding: int,
        locale: Locale,
    ) -> str:
        now = time.time()
        new = self.syntax(msg.conversation, "new")
        lines = [notice("status_title", locale)]
        if pending is not None and pending.expires_at > now:
            asked = {
                "question": quote(pending.request.question),
                "age": age_text(now - pending.created_at, locale),
            }
            asker = pending.asked_by
            if pending.policy == "starter" and asker is not None and asker.user_id != msg.sender.user_id:
                lines.append(notice("status_question_of", locale, who=asker.label, **asked))
            else:
                lines.append(notice("status_question", locale, **asked))
        else:
            lines.append(notice("status_no_question", locale))
        if outstanding:
            lines.append(notice("status_waiting", locale, count=str(outstanding)))
        else:
            lines.append(notice("status_idle", locale))
        started = thread_started_at(thread_id) if thread_id else None
        if thread_id is None:
            lines.append(notice("status_no_thread", locale))
        elif started is None:
            lines.append(notice("status_thread_unknown_age", locale, new=new))
        else:
            lines.append(notice("status_thread", locale, age=age_text(now - started, locale), new=new))
        lines.append(notice("status_agent", locale, **agent_here(self.config, msg.conversation, locale)))
        return "\n".join(lines)

    def help_text(self, conv: Conversation, locale: Locale) -> str:
        """What ``/help`` says: how to talk to the bot (as the platform has it there) and the
        commands, as they are typed there (``syntax``)."""
        try:
            adapter = self.outbox.adapter_for(conv.platform)
            intro, extra = adapter.how_to_talk(conv, locale), adapter.own_commands(conv)
        except LookupError:
            intro, extra = None, ()
        return help_text(locale, lambda name: self.syntax(conv, name), extra, intro)

    def syntax(self, conv: Conversation, name: str) -> str:
        """How a person types command ``name`` in ``conv`` (``PlatformAdapter.command_spelling``)."""
        try:
            return self.outbox.adapter_for(conv.platform).command_spelling(conv, name)
        except LookupError:
            return f"/{name}"

    # --- the chat thread's current agent thread ----------------------------------------------

    async def is_current(self, conv: Conversation, thread_id: str) -> bool:
        """False when ``conv`` was restarted (``/new``) since ``thread_id`` was its agent thread."""
        current = await self.store.thread_of_chat(conv.thread_key)
        return current is None or current == thread_id
