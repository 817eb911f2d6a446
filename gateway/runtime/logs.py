"""Structured logs: every line of a run carries platform, chat, thread id and request id.

The run's coordinates live in context variables set by the worker; a logging
filter copies them onto each record, so any logger (ours, an SDK's) gets them.

No secret reaches a log line: every handler carries ``RedactingFilter``, which masks the
configured secrets (``register_secrets``) and token shapes (each platform's, declared by its
settings model, e.g. a bot token in a URL; ``Bearer`` headers, URL passwords) in the message and
in the formatted traceback; the chatty HTTP and SDK loggers are held at WARNING, their child
loggers too whatever level the SDK gives them (``QuietLibraries``). A store's URL is shown with
``without_secrets`` and its secrets registered (``url_secrets``).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from clarigate.gateway.runtime.redaction import RedactingFilter, _platforms

RUN_FIELDS = ("platform", "chat", "thread_id", "request_id", "inbound_id")

_context: dict[str, ContextVar[str | None]] = {
    name: ContextVar(f"clarigate_{name}", default=None) for name in RUN_FIELDS
}


@contextmanager
def log_context(**values: str | None) -> Iterator[None]:
    """Attach run coordinates (``platform``, ``chat``, ``thread_id``, ``request_id``, ``inbound_id``)."""
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
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
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


_calls = logging.getLogger("clarigate.gateway.platform_calls")


def log_platform_call(platform: str, method: str, status: str, message_id: object = None) -> None:
    """One line per platform API call: method, status and the platform's message id when there is
    one (the run's coordinates come along from the context, as on every line)."""
    if _calls.isEnabledFor(logging.INFO):
        suffix = f", message {message_id}" if message_id else ""
        _calls.info("%s %s: %s%s", platform, method, status, suffix)


#: Loggers that print URLs, headers, bodies or what people wrote below WARNING, held there even at
#: debug (each platform's SDK loggers join them: ``quiet_loggers``): the HTTP clients (the OpenAI
#: SDK's own fork too: httpx2, httpcore2); aiosqlite (every checkpoint blob it writes, the
#: conversation's text in them), MCP's client (each tool call's arguments and result), LangSmith
#: (its run payloads) and markdown-it (the text it parses).
QUIET_LOGGERS = (
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "urllib3",
    "aiohttp",
    "websockets",
    "aiosqlite",
    "mcp",
    "langsmith",
    "markdown_it",
)


def quiet_loggers() -> tuple[str, ...]:
    """The HTTP libraries' loggers and every platform's SDK loggers."""
    return QUIET_LOGGERS + tuple(name for p in _platforms() for name in p.settings_model.sdk_loggers)


class QuietLibraries(logging.Filter):
    """Drops a record of a quiet logger's tree (``slack_bolt.AsyncApp`` under ``slack_bolt``) below
    that quiet logger's level (WARNING unless lowered on purpose): an SDK sets its child loggers'
    levels itself (Bolt copies the root logger's when an app is built), past ``guard_handlers``."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for a line of a quiet library below its level."""
        if record.levelno >= logging.WARNING:
            return True
        name = record.name
        trees = [q for q in _quiet_names if name == q or name.startswith(q + ".")]
        if not trees:
            return True
        return record.levelno >= logging.getLogger(max(trees, key=len)).getEffectiveLevel()


_quiet_names: tuple[str, ...] = QUIET_LOGGERS


def guard_handlers() -> None:
    """Put ``RedactingFilter`` and ``QuietLibraries`` on every handler of every logger, and quiet
    the chatty libraries.

    Call again after importing an SDK that installs its own handler (a platform's
    ``own_handler_loggers``, e.g. lark-oapi's, printing to stdout from import time): that
    handler is removed, so its lines go through ours.
    """
    for name in (n for p in _platforms() for n in p.settings_model.own_handler_loggers):
        sdk = logging.getLogger(name)
        for handler in list(sdk.handlers):
            sdk.removeHandler(handler)
        sdk.propagate = True
    global _quiet_names
    _quiet_names = quiet_loggers()
    for name in _quiet_names:
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.WARNING or logger.level < logging.WARNING:
            logger.setLevel(logging.WARNING)
    # (a copy first: an SDK loading in another thread may be adding loggers meanwhile)
    known = list(logging.Logger.manager.loggerDict.values())
    loggers = [logging.getLogger()] + [item for item in known if isinstance(item, logging.Logger)]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, QuietLibraries) for f in handler.filters):
                handler.filters.insert(0, QuietLibraries())  # first: a dropped line is not redacted
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter())


def access_logged() -> bool:
    """Whether uvicorn writes an access line per request (webhooks, probes, ``/metrics``): at
    debug level only. At info a message shows in its own lines (received and queued, run, sends)
    and requests in the metrics; an access line per webhook would cost every ack its formatting
    and say nothing those do not."""
    return logging.getLogger().getEffectiveLevel() <= logging.DEBUG


LEVELS = ("debug", "info", "warning", "error")


def _lowered(value: object) -> object:
    return value.strip().lower() if isinstance(value, str) else value


#: A setting's log level or format as operators write it: ``INFO`` as well as ``info``.
LogLevel = Annotated[Literal["debug", "info", "warning", "error"], BeforeValidator(_lowered)]
LogFormat = Annotated[Literal["text", "json"], BeforeValidator(_lowered)]


def level_from(name: str | None, default: int = logging.INFO) -> int:
    """The logging level called ``name`` (``debug``…``error``, any case); ``default`` when unset."""
    if not name:
        return default
    level = logging.getLevelName(name.strip().upper())
    if not isinstance(level, int):
        raise ValueError(f"log level {name!r} is not one of {', '.join(LEVELS)}")
    return level


def setup_logging(
    log_format: Literal["text", "json"] = "text", level: int = logging.INFO, stream: Any = None
) -> None:
    """Configure the root logger once for the process (replacing earlier handlers).

    Every handler gets the redacting filter; the HTTP and SDK loggers stay at WARNING even at
    ``DEBUG`` (their lower levels print request URLs and bodies).
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(RunContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    guard_handlers()
