"""No secret reaches a log line: secrets and token shapes masked in every line, URLs shown without theirs.

Every handler carries ``RedactingFilter`` (installed by ``logs.setup_logging``), which masks the
configured secrets (``register_secrets``) and token shapes (each platform's, declared by its
settings model, e.g. a bot token in a URL; ``Bearer`` headers, URL passwords) in the message and
in the formatted traceback. A store's URL is shown with ``without_secrets`` and its secrets
registered (``url_secrets``).
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import unquote

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


def _platforms() -> list[Any]:
    from clarigate.gateway.boundary import registry

    try:
        return list(registry.installed().values())
    except ValueError:  # a broken entry point stops the start elsewhere; logging goes on
        return list(registry.built_in().values())
