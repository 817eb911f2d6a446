"""The console platform: one person at a terminal, talking to the bot through the core.

``say`` and ``submit`` hand what the person typed to the core (``GatewayPort``), as
an ``InboundMessage`` or an ``InboundAnswer``; ``send`` prints what the core sends back
(``render``). Runs are shown live: the answer is printed as the model writes it.
"""

from __future__ import annotations

import itertools
import os
import sys
import uuid
from typing import Any, ClassVar, TextIO

from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import (
    AcceptOutcome,
    AnswerOutcome,
    Conversation,
    InboundAnswer,
    InboundMessage,
    MessageRef,
    Sender,
)
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    LiveEnd,
    LiveView,
    Outbound,
    TextReply,
)
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter

from .render import BOT, QUIT, STATUS, inert, live_delta, render, words

LIVE_MODE = "print"


class ConsoleAdapter(PlatformAdapter):
    """Platform ``console``: typed lines in (through ``say`` and ``submit``), printed text out."""

    name: ClassVar[str] = "console"
    platform: ClassVar[str] = "console"

    def __init__(
        self,
        gateway: GatewayPort,
        out: TextIO | None = None,
        *,
        user: str | None = None,
        language: str | None = None,
    ) -> None:
        """``out`` is where it prints (default stdout); ``user`` names the person (default
        ``$USER``); ``language`` is their interface language, as a platform would report it
        (default from ``$LANG``)."""
        self.gateway = gateway
        self.out = out if out is not None else sys.stdout
        self.sender = Sender(user_id=user or os.environ.get("USER") or "you")
        self.language = language if language is not None else _system_language()
        #: The question shown last and not closed since: what the next typed line may answer.
        self.open: ClarificationOut | None = None
        self._ids = itertools.count(1)
        self._session = uuid.uuid4().hex[:8]  # event ids unique across runs of the chat
        self._live: dict[str, str] = {}  # live message id -> the text it printed so far
        self._status: dict[str, str] = {}  # live message id -> the step it printed last
        self._line_open = False  # a live line was printed without its newline yet
        self.reply_locale: Locale | None = None  # the language of the last reply printed

    @property
    def conversation(self) -> Conversation:
        """The one conversation of this terminal: a direct chat with the person."""
        return Conversation(
            platform=self.platform, chat_id=self.sender.user_id, is_direct=True, chat_type="private"
        )

    @property
    def locale(self) -> Locale:
        """The language of the terminal's own words when no question gives one (``$LANG``)."""
        return "zh" if self.language == "zh" else "en"

    # --- what the person does -------------------------------------------------------------------

    async def say(self, text: str) -> AcceptOutcome:
        """Hand a typed line to the core as a message (a request, a typed answer or a command)."""
        n = next(self._ids)
        message = InboundMessage(
            conversation=self.conversation,
            sender=self.sender,
            text=text,
            event_id=f"{self._session}-{n}",
            message_id=str(n),
            language=self.language,
        )
        return await self.gateway.accept(message)

    def stop_run(self) -> bool:
        """Stop the person's run in progress (Ctrl-C), as ``/cancel`` would; True when one was."""
        return self.gateway.stop_run(self.conversation.thread_key, self.sender)

    async def submit(self, values: dict[str, Any]) -> AnswerOutcome:
        """Submit a filled-in form for the open question (raw values: the core types them)."""
        return await self._answer(values=values)

    async def _answer(self, **what: Any) -> AnswerOutcome:
        if self.open is None:
            raise LookupError("no open question")
        answer = InboundAnswer(
            sender=self.sender,
            event_id=f"{self._session}-answer-{next(self._ids)}",
            token=self.open.token,
            conversation=self.conversation,
            **what,
        )
        return await self.gateway.submit_answer(answer)

    # --- PlatformAdapter ------------------------------------------------------------------------

    def how_to_talk(self, conversation: Conversation, locale: Locale) -> str | None:
        """``/help``'s first paragraph as the terminal works: no buttons, forms field by field."""
        return words("help", locale)

    def own_commands(self, conversation: Conversation) -> tuple[str, ...]:
        """``/quit`` leaves the chat: the terminal's own command, listed by ``/help``."""
        return (QUIT.removeprefix("/"),)

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Print the item; a question becomes the open one, its closing closes it."""
        if isinstance(item, ClarificationOut):
            self.open = item
        elif isinstance(item, ClarificationClosed) and self._is_open(item.view.request.request_id):
            self.open = None
        if isinstance(item, TextReply):
            self.reply_locale = detect_locale(item.text)
        if isinstance(item, TextReply) and item.live is not None and item.live.message_id in self._live:
            self._finish_live(item.live.message_id, item.text)
        elif isinstance(item, LiveEnd):
            self._end_live(item.ref.message_id)
        elif (text := render(item)) is not None:
            self._close_line()
            self.print(text)
        return MessageRef(platform=self.platform, chat_id=conversation.chat_id, message_id=self._new_id())

    def print(self, text: str) -> None:
        """Write ``text`` and a newline."""
        self.out.write(text + "\n")
        self.out.flush()

    def _is_open(self, request_id: str) -> bool:
        return self.open is not None and self.open.request.request_id == request_id

    def _new_id(self) -> str:
        return f"console-{next(self._ids)}"

    # --- live: the answer printed as it is written ----------------------------------------------

    def live_mode(self, conversation: Conversation) -> str | None:
        """Always live: a terminal shows text as it comes."""
        return LIVE_MODE

    def live_interval(self, conversation: Conversation, mode: str) -> float:
        """A terminal has no rate limit; a few updates a second read smoothly."""
        return 0.2

    async def show_live(
        self, conversation: Conversation, view: LiveView, ref: MessageRef | None
    ) -> MessageRef | None:
        """Print what the answer gained since the last update; before it begins, each new step
        ("🔧 Searching the docs…") on a line of its own."""
        if ref is None:
            ref = MessageRef(platform=self.platform, chat_id=conversation.chat_id, message_id=self._new_id())
        printed = self._live.get(ref.message_id, "")
        if view.text:
            self._write_live(ref.message_id, printed, view.text)
            return ref
        self._live.setdefault(ref.message_id, "")
        if view.status and view.status != self._status.get(ref.message_id):
            # what the agent is doing, a line each time it changes, until the answer begins
            self._status[ref.message_id] = view.status
            self._close_line()
            self.print(STATUS + inert(view.status))
        return ref

    def _write_live(self, message_id: str, printed: str, text: str) -> None:
        delta, restart = live_delta(printed, text)
        if restart or not printed:
            self._close_line()
            self.out.write(BOT)
        self.out.write(delta)
        self.out.flush()
        self._line_open = True
        self._live[message_id] = text

    def _finish_live(self, message_id: str, text: str) -> None:
        self._status.pop(message_id, None)
        printed = self._live.pop(message_id, "")
        if text != printed:
            self._write_live(message_id, printed, text)
            self._live.pop(message_id, None)
        self._close_line()

    def _end_live(self, message_id: str) -> None:
        self._status.pop(message_id, None)
        self._live.pop(message_id, None)
        self._close_line()

    def _close_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False


def _system_language() -> str | None:
    """The person's language as ``$LANG`` says (``zh_CN.UTF-8`` -> ``zh``), else None."""
    lang = os.environ.get("LANG", "")
    return "zh" if lang.lower().startswith("zh") else None


__all__ = ["ConsoleAdapter", "inert"]
