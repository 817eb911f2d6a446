"""Reading a real terminal (a tty), as a person types at it; piped input is read line by line
(``receive``) and never comes here.

At the prompt, the line is read with ``input`` and the standard library's ``readline`` when the
terminal is the process's own: the arrow keys edit the line, up and down go through the lines
typed before, and a paste of several lines (the terminal's bracketed paste) is one message.

While a run works, the terminal is still read: a command that answers out of turn (``/status``,
``/help``, ``/cancel``) goes to the core at once, ``/quit`` leaves at once (``receive``); anything
else typed then is kept and handled after the run, as if typed at the next prompt. Lines that
arrive together (a paste) are one message. What is typed then is not echoed (``quiet``), so it
never lands in the middle of the answer being printed: a line shows after the next prompt, where
it is handled, and a command by its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import sys
import termios
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TextIO

#: How much is read at once from the terminal while a run works.
_CHUNK = 65536
#: What keys that edit (the arrows, Home, Delete…) send: no editing while a run works, so dropped.
_KEYS = re.compile(r"\x1b(?:\[[0-9;]*[~A-Za-z]|O[A-Za-z])")


def is_terminal(stdin: TextIO) -> bool:
    """True when ``stdin`` is a tty (not a pipe, a file or a test's ``StringIO``)."""
    try:
        return stdin.isatty()
    except (ValueError, AttributeError):  # closed, or no such method
        return False


class Terminal:
    """The lines of one tty: read at the prompt, and listened to while a run works."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        """``input`` (with ``readline``) edits the line only on the process's own stdin and stdout."""
        self.stdin = stdin
        self.out = out
        self.fd = stdin.fileno()
        self.editing = stdin is sys.stdin and out is sys.stdout
        if self.editing:
            import readline  # noqa: F401  (importing it gives input() line editing and history)
        #: What was typed while a run worked and is not a command: the next lines read ("" = end).
        self.early: list[str] = []
        self.ended = False  # the end of input came right after lines read while a run worked

    def line(self, prompt: str) -> str:
        """The next line, with its newline; "" at the end of input (Ctrl-D)."""
        if self.early:
            text = self.early.pop(0)
            if text:  # shown after the prompt, where it is handled now
                self.out.write(prompt + text)
                self.out.flush()
            return text
        if self.editing:
            try:
                return input(prompt) + "\n"
            except EOFError:
                return ""
        self.out.write(prompt)
        self.out.flush()
        return self.stdin.readline()

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """While a run works: what is typed is read as before, but the terminal does not echo it
        (it would land in the answer being printed); its settings are back as they were after."""
        try:
            saved = termios.tcgetattr(self.fd)
        except termios.error:  # not a terminal after all: nothing to keep quiet
            yield
            return
        quiet = list(saved)
        quiet[3] &= ~(termios.ECHO | termios.ECHONL)  # the local modes
        termios.tcsetattr(self.fd, termios.TCSANOW, quiet)
        try:
            yield
        finally:
            termios.tcsetattr(self.fd, termios.TCSANOW, saved)

    async def listen(self, until: asyncio.Future[Any], typed: Callable[[str], Awaitable[None]]) -> None:
        """Until ``until`` is done, hand what is typed to ``typed``, the lines that came together
        as one text ("" once for the end of input, then no more listening)."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()
        loop.add_reader(self.fd, ready.set)
        try:
            while not until.done():
                waiting: asyncio.Future[object] = asyncio.ensure_future(ready.wait())
                await asyncio.wait([until, waiting], return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
                if not ready.is_set():
                    continue
                ready.clear()
                text = self.together()
                if text is None:
                    continue
                await typed(text)
                if self.ended:
                    await typed("")
                if text == "" or self.ended:
                    break
        finally:
            loop.remove_reader(self.fd)

    def together(self) -> str | None:
        """Every line the terminal holds now, as one text ("" at the end of input); None when it
        holds none (it was seen readable before the last read)."""
        chunks: list[bytes] = []
        while select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, _CHUNK)
            if not chunk:  # the end of input (Ctrl-D), after what came before it
                self.ended = bool(chunks)
                return _KEYS.sub("", self.decode(chunks)) if chunks else ""
            chunks.append(chunk)
        return _KEYS.sub("", self.decode(chunks)) if chunks else None

    def decode(self, chunks: list[bytes]) -> str:
        """The bytes read, as text in the terminal's encoding (U+FFFD for what it cannot read)."""
        return b"".join(chunks).decode(self.stdin.encoding or "utf-8", "replace")
