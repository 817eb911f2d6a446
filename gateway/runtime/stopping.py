"""How ``serve`` stops: SIGTERM, SIGINT and SIGHUP are handled from its first moment to its last.

During the start-up (a store or database waited for, the agent loading, the platforms
starting) a stop signal ends the start: the task doing it is cancelled, what was started is
stopped, and ``serve`` says "stopped cleanly" and exits 0, as it does after serving. From the
moment the HTTP server serves, a signal goes to it (``graceful.GracefulServer``): a graceful
shutdown. Whenever it comes, each signal is passed on to the worker processes already started
(``StopSignals.forward``). ``clarigate serve`` installs the handlers before it reads its
configuration or loads anything heavy (``cli.main``): this module needs the standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Callable, Generator
from types import FrameType
from typing import Any

log = logging.getLogger("clarigate.gateway.runtime.serve")

#: SIGHUP (a closed terminal, some supervisors' "restart") drains like SIGTERM: no reload.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Handler = Callable[[int, FrameType | None], None]


class StopSignals:
    """Where a stop signal goes: the start-up task (cancelled), then the HTTP server, and always
    the worker processes (``forward``, set once they are started)."""

    def __init__(self) -> None:
        self.received: int | None = None  # the first stop signal
        self.forward: Callable[[int], None] | None = None
        self._server: Handler | None = None
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def handle(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler: passed on, then to the server while it serves, else the start ends."""
        if self.forward is not None:
            self.forward(sig)
        first = self.received is None
        if first:
            self.received = sig
            if self._loop is not None or self._server is not None:  # else said once the start begins
                self._say_stopping()
        if self._server is not None:
            self._server(sig, frame)
        elif first and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nothing to cancel
                self._loop.call_soon_threadsafe(self._end_start)

    def _end_start(self) -> None:
        if self._task is not None:  # (not once the start is over: then the server stops)
            self._task.cancel()

    def starting(self) -> None:
        """Called first thing by the start-up task: a stop signal from now on cancels it (at once,
        when one came before)."""
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        if self.received is not None and self._task is not None:
            self._say_stopping()  # it came before the logs were set up
            self._task.cancel()

    def _say_stopping(self) -> None:
        log.info("received %s: stopping", signal.Signals(self.received or signal.SIGTERM).name)

    def started(self) -> None:
        """The start is over: a stop signal from now on waits for the server (``serving``) rather
        than cancel what is about to serve."""
        self._task = None

    @contextlib.contextmanager
    def serving(self, handle_exit: Handler) -> Generator[None, None, None]:
        """Signals go to the HTTP server's ``handle_exit`` meanwhile (one that came during the
        start and was not heard there goes to it at once)."""
        self._server = handle_exit
        if self.received is not None:
            handle_exit(self.received, None)
        try:
            yield
        finally:
            self._server = None


_installed: StopSignals | None = None


@contextlib.contextmanager
def stop_signals() -> Generator[StopSignals, None, None]:
    """Handle ``STOP_SIGNALS`` with one ``StopSignals`` meanwhile (the one installed already, when
    nested); the previous handlers are put back after. Off the main thread, none is installed."""
    global _installed
    if _installed is not None:
        yield _installed
        return
    stops = StopSignals()
    original: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        original = {sig: signal.signal(sig, stops.handle) for sig in STOP_SIGNALS}
    _installed = stops
    try:
        yield stops
    finally:
        _installed = None
        for sig, handler in original.items():
            signal.signal(sig, handler)


def installed_stops() -> StopSignals:
    """The ``StopSignals`` of this ``serve`` (a detached one outside ``stop_signals``)."""
    return _installed if _installed is not None else StopSignals()
