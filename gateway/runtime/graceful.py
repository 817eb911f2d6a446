"""uvicorn's server, stopped by ``serve``'s stop signals (``stopping``) with a clean exit."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Generator
from types import FrameType

import uvicorn

from clarigate.gateway.runtime.stopping import installed_stops


class GracefulServer(uvicorn.Server):
    """uvicorn, but SIGTERM/SIGINT/SIGHUP end in a clean exit (status 0) after the graceful shutdown.

    uvicorn re-raises a caught signal once it has shut down, which would make the process die
    "killed by SIGTERM"; an orchestrator should instead see a clean exit. The signals come
    through ``serve``'s ``StopSignals`` (uvicorn's own list lacks SIGHUP).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Take the stop signals while serving."""
        with installed_stops().serving(self.handle_exit):
            yield

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First signal: shut down gracefully; a second SIGINT forces the exit (logged by
        ``StopSignals``)."""
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True
