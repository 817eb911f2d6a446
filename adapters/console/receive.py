"""Reading the terminal: each line the person types goes to the core, then the chat waits for
everything it caused to be printed before it asks for the next one.

A form is asked field by field (the terminal's wizard), a field's hint (a schema's description
and range) on the line above its first prompt: each value is checked as it is typed (its type,
required, a typed interrupt's bounds: a number's range, a text's length) and that field alone asked
again, with the reason, until it fits, then the whole form is submitted to the core as one answer with
the raw values (the core types them). A line starting with ``/`` inside a form goes to the core
like any message: ``/help`` and ``/status`` answer and the field is asked again, ``/new`` and
``/cancel`` close the question, an unknown ``/word`` is a new request. ``/quit`` and the end of
input leave, with nothing half-filled sent. A line naming a field (``name: demo``, ``Team size:
3``) is that field's value: at its own prompt the value after the colon, at another field's
prompt it fills the field it names (not asked later) and the field at hand is asked again. A
risk confirmation's form whose answer goes ahead (a ticked checkbox or a go-ahead option, typed
or kept with Enter) is sent only once "confirm" is typed, as a typed pick is (``confirmed``).

A typed line outside a form goes to the core as it is, as on every platform: a typed pick of a
risk confirmation's go-ahead option, a plain "yes", "confirm", another option instead of
"confirm" are the core's to read (``gateway/flow/confirm.py``).

On a real terminal (``terminal``), the line is edited with ``readline``, a paste of several lines
is one message, and a command that answers out of turn (``/status``, ``/help``, ``/cancel``) is
handed over while a run works; ``/quit`` then leaves at once, saying that the message was not
answered (the chat's store is in memory: nothing is kept once it closes, so it is to be sent
again); other lines typed then wait for the run. Piped input is read one line at a time, each
after the run of the one before. Ctrl-C during a run stops it, as ``/cancel`` would, and the prompt
comes back; at the prompt (or a second one while the run stops) it leaves the chat, saying the
answer was not finished when one was under way.

A line that is not valid in the terminal's encoding (a Latin-1 terminal, a file piped in) is
taken with U+FFFD in place of each byte that could not be read, and the chat goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TextIO

from clarigate.agent.protocol import (
    HumanInputRequest,
    answer_with_form,
    check_form_values,
    named_line,
    ui_text,
)
from clarigate.agent.protocol.bounds import bound_error
from clarigate.agent.protocol.catalog.command_words import names_of
from clarigate.agent.protocol.risk import form_goes_ahead, is_confirm_word
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.boundary.outbound_items import ClarificationOut
from clarigate.gateway.flow.commands import TRAILING_PUNCTUATION, parse_command
from clarigate.gateway.flow.notices import COMMAND_SLASHES

from .adapter import ConsoleAdapter
from .render import BOT, PROBLEM, PROMPT, QUIT, field_hint, field_prompt, inert, words
from .terminal import Terminal, is_terminal

#: What Python's ``surrogateescape`` makes of bytes it could not decode (stdin under a C or POSIX
#: locale): lone surrogates, which no JSON, no platform and no model can take.
_UNDECODED = re.compile(r"[\ud800-\udfff]")


def forgiving(stdin: TextIO) -> TextIO:
    """``stdin`` decoding with U+FFFD for bytes its encoding cannot read, where it can still be
    told so (a text stream not read yet; a strict one would raise, and lose the line, instead)."""
    if isinstance(stdin, io.TextIOWrapper) and stdin.errors in ("strict", "surrogateescape"):
        with contextlib.suppress(io.UnsupportedOperation, ValueError):  # read already, or closed
            stdin.reconfigure(errors="replace")
    return stdin


class Leave(Exception):
    """The person typed /quit or the input ended."""


def is_quit(text: str) -> bool:
    """True when the line ``text`` (stripped) is ``/quit`` by one of its names (``/退出``), written
    as the core's commands may be: a full-width slash, any case, sentence punctuation after it."""
    if len(text) < 2 or text[0] not in COMMAND_SLASHES:
        return False
    return text[1:].lower().rstrip(TRAILING_PUNCTUATION) in names_of(QUIT.removeprefix("/"))


def is_form(request: HumanInputRequest) -> bool:
    """True when ``request`` is a form the terminal asks field by field."""
    return request.input_mode == "form" and bool(request.fields)


class ConsoleChat:
    """The read loop of one terminal: stdin -> the console adapter -> the core."""

    def __init__(
        self,
        adapter: ConsoleAdapter,
        stdin: TextIO,
        run: Callable[[Coroutine[Any, Any, Any]], Any],
        settle: Callable[[], Awaitable[None]],
    ) -> None:
        """``run`` runs a coroutine on the bot's event loop; ``settle`` waits until every job the
        core accepted so far is done (so its replies are printed before the next prompt)."""
        self.adapter = adapter
        self.stdin = forgiving(stdin)
        self.run = run
        self.settle = settle
        #: A real terminal: edited lines, and listened to while a run works (None: piped input).
        self.terminal = Terminal(self.stdin, adapter.out) if is_terminal(self.stdin) else None

    def read(self, prompt: str) -> str:
        """One line of input without its newline; ``Leave`` at end of input or on /quit. Piped
        input is not echoed by a terminal: the line read is printed after its prompt, so a
        transcript reads one turn a line (``you> hello``, then ``bot> …``)."""
        if self.terminal is not None:
            line = self.terminal.line(prompt)
        else:
            self.adapter.out.write(prompt)
            self.adapter.out.flush()
            line = self.stdin.readline()
        text = _UNDECODED.sub("\ufffd", line).strip()
        if self.terminal is None and line != "":
            self.adapter.print(inert(text))
        if line == "":
            self.adapter.print("")
            raise Leave
        if is_quit(text):
            raise Leave
        return text

    def loop(self) -> None:
        """Until /quit or the end of input."""
        while True:
            open_question = self.adapter.open
            if open_question is not None and is_form(open_question.request):
                self.fill_in(open_question)
                continue
            text = self.read(PROMPT)
            if text:
                self.hand_over(text)

    def hand_over(self, text: str) -> None:
        """Give a typed line to the core and wait for what it answers."""

        async def say() -> None:
            await self.adapter.say(text)
            await self.settled()

        self.running(say())

    def running(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run ``work`` (what was typed, and the run it caused). Ctrl-C meanwhile stops the run of
        the conversation, as ``/cancel`` would: its "stopped" line is printed and None returned (the
        prompt comes back). With no run of the person's going on, or at a second Ctrl-C, it says
        that the answer was not finished before the chat leaves."""
        try:
            return self._quietly(work)
        except KeyboardInterrupt:
            if not self.adapter.stop_run():
                self._interrupted()
                raise
        try:
            self._quietly(self.settled())  # the run ends with its line: nothing more runs
        except KeyboardInterrupt:
            self._interrupted()
            raise
        return None

    def _quietly(self, work: Coroutine[Any, Any, Any]) -> Any:
        with self.terminal.quiet() if self.terminal is not None else contextlib.nullcontext():
            return self.run(work)

    def _interrupted(self) -> None:
        self.adapter._close_line()  # a half-printed answer ends its line first
        locale = self.adapter.reply_locale or self.adapter.locale
        self.adapter.print(PROBLEM + words("interrupted", locale))

    async def settled(self) -> None:
        """Wait for the core (``settle``); on a terminal, what is typed meanwhile is handled."""
        if self.terminal is None:
            await self.settle()
            return
        waiting = asyncio.ensure_future(self.settle())
        try:
            await self.terminal.listen(waiting, self.typed_meanwhile)
        except BaseException:  # /quit typed meanwhile (Leave): nothing more to wait for
            waiting.cancel()
            raise
        await waiting

    async def typed_meanwhile(self, text: str) -> None:
        """Lines typed while a run works: ``/quit`` leaves at once (``Leave``), saying the message
        is not answered; a command that answers out of turn goes to the core at once; anything
        else (and the end of input) waits for the run, as one message."""
        message = _UNDECODED.sub("\ufffd", text).strip()
        if is_quit(message):  # leave now: what still runs or waits is not kept once the chat closes
            self.adapter._close_line()
            self.adapter.print(
                PROBLEM + words("left_waiting", self.adapter.reply_locale or self.adapter.locale)
            )
            raise Leave
        command = parse_command(message)
        if command is not None and not command.in_turn and "\n" not in message:
            await self.adapter.say(message)
            return
        if text == "" or message:
            assert self.terminal is not None
            self.terminal.early.append(message + "\n" if message else "")

    def fill_in(self, out: ClarificationOut) -> None:
        """Ask the open form field by field and submit it; returns when it is answered or closed."""
        request = out.request
        self.adapter.print(words("form_intro", request.locale))
        raw: dict[str, str] = {}
        for field in request.fields:
            if field.name not in raw and (hint := field_hint(field, request)) is not None:
                self.adapter.print(hint)  # once, above the field's first prompt
            while field.name not in raw:  # not filled yet (a line naming it at another's prompt fills it)
                text = self.read(field_prompt(field, request.locale))
                if text.startswith(COMMAND_SLASHES):
                    self.hand_over(text)
                    if self.adapter.open is not out:  # /new, /cancel or a new request closed it
                        return
                    continue
                # "name: demo" (or "Project name: demo") is the value of the field it names: this
                # one, or another one (filled, and this one asked again); any other line is the value
                named, value = named_line(request, text) or (field, text)
                value = value.strip()
                given = {named.name: value} if value else {}  # Enter: as shown (its default, if any)
                check = check_form_values(request, given)  # its type, required, then its bounds
                error = check.errors.get(named.name) or bound_error(
                    named, check.values.get(named.name), request.locale
                )
                if error is not None:
                    self.adapter.print(PROBLEM + error)
                elif value:
                    raw[named.name] = value
                elif named is field:
                    break
        if self.confirmed(out, raw):
            self.submit(out, raw)

    def confirmed(self, out: ClarificationOut, raw: dict[str, str]) -> bool:
        """True when the filled-in form may be sent: an answer of a risk form that goes ahead (a
        ticked checkbox, an option that is not the safe choice, typed or kept with Enter:
        ``risk.form_goes_ahead``) only once "confirm" (确认) is typed, as for a typed pick on every
        platform; anything else sends nothing (a command goes to the core) and the form is asked
        again."""
        request = out.request
        check = check_form_values(request, raw)
        if not check.ok or not form_goes_ahead(request, check.values):
            return True  # refused by the core with its errors, or it decides nothing
        shown = answer_with_form(request, check.values, None).value
        word = ui_text("confirm", request.locale).casefold()
        self.adapter.print(BOT + inert(ui_text("confirm_typed", request.locale, word=word, option=shown)))
        text = self.read(PROMPT)
        if is_confirm_word(text):
            return True
        if text.startswith(COMMAND_SLASHES):
            self.hand_over(text)
        else:
            self.adapter.print(PROBLEM + inert(ui_text("confirm_dropped", request.locale, option=shown)))
        return False

    def submit(self, out: ClarificationOut, raw: dict[str, str]) -> None:
        """Send the form's values; the core's refusal, if any, is printed."""

        async def submit() -> Any:
            outcome = await self.adapter.submit(raw)
            if outcome.accepted:
                await self.settled()
            return outcome

        outcome = self.running(submit())
        if outcome is None or outcome.accepted:  # (None: its run was stopped, Ctrl-C)
            if self.adapter.open is out:
                self.adapter.open = None
            return
        if outcome.status is AnswerStatus.INVALID:
            for error in outcome.errors.values() or [outcome.message]:
                self.adapter.print(PROBLEM + error)
            return  # the form is asked again
        if outcome.message:
            self.adapter.print(PROBLEM + outcome.message)
        if self.adapter.open is out:
            self.adapter.open = None
