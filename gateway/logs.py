"""Structured logs: every line of a run carries platform, chat, thread id and request id.

The run's coordinates live in context variables set by the worker; a logging
filter copies them onto each record, so any logger (ours, an SDK's) gets them.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

RUN_FIELDS = ("platform", "chat", "thread_id", "request_id")

_context: dict[str, ContextVar[str | None]] = {
    name: ContextVar(f"clarigate_{name}", default=None) for name in RUN_FIELDS
}


@contextmanager
def log_context(**values: str | None) -> Iterator[None]:
    """Attach run coordinates (``platform``, ``chat``, ``thread_id``, ``request_id``) to log lines."""
    tokens = [
        (_context[name], _context[name].set(value)) for name, value in values.items() if name in _context
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def set_log_context(**values: str | None) -> None:
    """Set run coordinates for the rest of the current task (the task's context ends with it)."""
    for name, value in values.items():
        if name in _context:
            _context[name].set(value)


def current_log_context() -> dict[str, str]:
    """The run coordinates set in this context (only those that are set)."""
    return {name: value for name, var in _context.items() if (value := var.get()) is not None}


class RunContextFilter(logging.Filter):
    """Copies the run coordinates onto every record (empty string when unset)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Add the fields; never drops a record."""
        for name, var in _context.items():
            if not hasattr(record, name):
                setattr(record, name, var.get() or "")
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, run coordinates, exception."""

    def format(self, record: logging.LogRecord) -> str:
        """Render ``record`` as a single JSON line."""
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in RUN_FIELDS:
            value = getattr(record, name, "")
            if value:
                line[name] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """Human-readable lines, with the run coordinates appended when set."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The classic line plus ``[platform=… thread_id=…]`` when inside a run."""
        text = super().format(record)
        extra = " ".join(f"{n}={getattr(record, n)}" for n in RUN_FIELDS if getattr(record, n, ""))
        return f"{text} [{extra}]" if extra else text


def setup_logging(
    log_format: Literal["text", "json"] = "text", level: int = logging.INFO, stream: Any = None
) -> None:
    """Configure the root logger once for the process (replacing earlier handlers)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RunContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
