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
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, Literal
from urllib.parse import unquote

from pydantic import BeforeValidator

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


# --- secrets ----------------------------------------------------------------------------------

MASK = "***"

#: Token shapes masked wherever they appear, configured or not: (needle, pattern, replacement).
#: A pattern runs only on lines whose lower-cased text holds its needle (a literal every match
#: contains): most lines hold none, and a regular expression pass per shape per line cost more
#: than the rest of the line's logging. These are every platform's; each platform's own shapes
#: (its settings model's ``token_shapes``) join them on first use (``_token_shapes``).
_GENERIC_SHAPES: list[tuple[str | None, re.Pattern[str], str]] = [
    ("bearer", re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]+"), r"\1" + MASK),
    ("@", re.compile(r"(://[^:/@\s]*:)[^@\s/]+@"), r"\1" + MASK + "@"),  # scheme://user:password@host
    ("****", re.compile(r"[\w-]{2,16}\*{4,}[\w-]{2,8}"), MASK),  # a provider's half-masked key: sk-ab****wxyz
    (  # a query's or a form body's secret parameter: ?password=…, &access_key=…, ticket=… (a
        # websocket's); the value only: punctuation that ends it before a space stays ("…=***: failed")
        "=",
        re.compile(
            r"(?i)((?<![^\s?&;])(?:[\w.-]*(?:password|passwd|secret|token|ticket)|(?:[\w.-]*[_.-]|api)?key)=)"
            r"[^&\s'\"]+?(?=[:;,.!?)\]}>]*(?:[&\s'\"]|$))"
        ),
        r"\1" + MASK,
    ),
]

#: Shorter configured values are not masked literally: they would erase ordinary words.
MIN_SECRET_LENGTH = 6

_secrets: list[str] = []


def register_secrets(values: Any) -> None:
    """Mask these values (tokens, passwords, keys) in every log line from now on."""
    known = set(_secrets)
    known.update(v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_LENGTH)
    _secrets[:] = sorted(known, key=len, reverse=True)  # longest first: a secret may contain another


_platform_shapes: list[tuple[str | None, re.Pattern[str], str]] | None = None


def register_token_shapes(shapes: Any) -> None:
    """Mask these token shapes (``(needle, pattern, replacement)``) too, from now on (the shapes of a
    platform named by ``extra_adapters``)."""
    known = _token_shapes()
    for needle, pattern, replacement in shapes:
        shape = (needle, re.compile(pattern), replacement)
        if shape not in known:
            known.insert(0, shape)


def _token_shapes() -> list[tuple[str | None, re.Pattern[str], str]]:
    """The installed platforms' shapes, then the generic ones (loaded once)."""
    global _platform_shapes
    if _platform_shapes is None:
        shapes = [shape for p in _platforms() for shape in p.settings_model.token_shapes]
        _platform_shapes = [(n, re.compile(p), r) for n, p, r in shapes] + _GENERIC_SHAPES
    return _platform_shapes


def redact(text: str) -> str:
    """``text`` with every registered secret and every known token shape masked."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    lowered = text.lower()
    for needle, pattern, replacement in _token_shapes():
        if needle is None or needle in lowered:
            text = pattern.sub(replacement, text)
    return text


#: A URL query parameter holding a secret, by its name: ``password``, ``sentinel_password``,
#: ``ssl_password`` (redis-py), ``sslpassword`` (libpq), any ``…secret``, ``…token``, ``…ticket``, ``…_key``.
_SECRET_PARAMETER = re.compile(r"(?i)pass(?:word|wd)|secret|token|ticket|(?:^|[_.-]|api)key$")
#: Where a URL's query starts: the first ``?name=`` (a password may hold ``?`` or ``@`` unescaped).
_QUERY_START = re.compile(r"\?(?=[A-Za-z_][\w.-]*=)")


def _url_parts(url: str) -> tuple[str, str, str, str]:
    """``url`` as ``scheme://``, user info (with its ``@``), hosts and path, query. A password
    holding ``/``, ``#`` or ``=`` unescaped stays in the user info, which ends at the last ``@``
    before the query."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        rest = url
    start = match.start() if (match := _QUERY_START.search(rest)) else len(rest)
    user_info, at, hosts = rest[:start].rpartition("@")
    return (scheme + sep if sep else ""), user_info + at, hosts, rest[start:]


def _secret_parameters(query: str) -> list[str]:
    return [
        value
        for name, _, value in (item.partition("=") for item in re.split(r"[?&;]", query))
        if value and _SECRET_PARAMETER.search(name)
    ]


def url_secrets(url: str | None) -> list[str]:
    """The secrets a store's or checkpointer's URL holds, as written and unescaped: its user
    info's password and the value of each query parameter named for a secret."""
    if not url:
        return []
    _, user_info, _, query = _url_parts(url)
    password = user_info[:-1].partition(":")[2]
    values = ([password] if password else []) + _secret_parameters(query)
    return list(dict.fromkeys(v for value in values for v in (value, unquote(value))))


def without_secrets(url: str) -> str:
    """``url`` with its password and its secret query parameters masked, for logs and reports."""
    scheme, user_info, hosts, query = _url_parts(url)
    user, _, password = user_info[:-1].partition(":")
    if password:  # a user name alone (trust or peer auth, an ACL user's default) is shown as it is
        user_info = f"{user}:{MASK}@" if user else f"{MASK}@"
    query = re.sub(
        r"([?&;])([^=&;]+)=([^&;]*)",
        lambda m: f"{m[1]}{m[2]}={MASK if m[3] and _SECRET_PARAMETER.search(m[2]) else m[3]}",
        query,
    )
    return scheme + user_info + hosts + query


class RedactingFilter(logging.Filter):
    """Masks secrets in a record's message and traceback before any formatter sees it.

    The message is rendered here (``msg % args``) so a secret passed as an argument is caught
    too; the traceback is rendered into ``exc_text``, which formatters print instead of
    rendering it again.
    """

    _formatter = logging.Formatter()

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact in place; never drops a record."""
        if getattr(record, "_clarigate_redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep its parts, masked
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        record._clarigate_redacted = True
        return True


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


def _platforms() -> list[Any]:
    from clarigate.gateway.boundary import registry

    try:
        return list(registry.installed().values())
    except ValueError:  # a broken entry point stops the start elsewhere; logging goes on
        return list(registry.built_in().values())


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
