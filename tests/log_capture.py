"""Capture every log line of a run as the gateway writes them (its handler, its redacting filter)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from clarigate.gateway.runtime import logs, redaction


@dataclass
class Captured:
    """The text written so far; ``lines()`` splits it."""

    stream: io.StringIO = field(default_factory=io.StringIO)

    def text(self) -> str:
        """Everything written."""
        return self.stream.getvalue()

    def lines(self) -> list[str]:
        """One entry per line written."""
        return self.text().splitlines()


@contextmanager
def captured_logs(
    secrets: list[str],
    *,
    log_format: str = "text",
    level: int = logging.DEBUG,
    chatty_libraries: bool = False,
) -> Iterator[Captured]:
    """The process logging as ``serve`` sets it up, written to memory.

    ``chatty_libraries`` lowers the HTTP and SDK loggers to DEBUG after set-up, as an operator
    chasing a problem might: the redacting filter alone must then keep the secrets out.
    """
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_levels = {name: logging.getLogger(name).level for name in logs.quiet_loggers()}
    saved_secrets = list(redaction._secrets)
    captured = Captured()
    redaction.register_secrets(secrets)
    logs.setup_logging(log_format, level, stream=captured.stream)  # type: ignore[arg-type]
    if chatty_libraries:
        for name in logs.quiet_loggers():
            logging.getLogger(name).setLevel(logging.DEBUG)
    try:
        yield captured
    finally:
        logs.guard_handlers()  # handlers SDKs added during the run are checked by the caller's asserts
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved_handlers:
            root.addHandler(handler)
        root.setLevel(saved_level)
        for name, saved in saved_levels.items():
            logging.getLogger(name).setLevel(saved)
        redaction._secrets[:] = saved_secrets


def assert_no_secret(captured: Captured, secrets: list[str]) -> None:
    """No line holds any of ``secrets`` (nor the part of a Telegram token after its colon)."""
    text = captured.text()
    for secret in secrets:
        pieces = [secret, *([secret.split(":", 1)[1]] if ":" in secret else [])]
        for piece in pieces:
            leaked = [line for line in captured.lines() if piece in line]
            assert piece not in text, f"secret {piece[:3]}… in the log: {leaked[:3]}"


def carries_inbound_id(line: str, platform: str) -> bool:
    """True when a text or JSON log line carries an inbound id of ``platform``."""
    return f"inbound_id={platform}:" in line or f'"inbound_id": "{platform}:' in line
