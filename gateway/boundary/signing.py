"""Comparing the proof a request presents (a signature, a shared secret) with the one expected.

Whatever a request carries is anyone's text: a header may hold any byte (Starlette reads headers
as Latin-1), a JSON string any code point, a lone surrogate included. ``hmac.compare_digest`` on
two ``str`` raises ``TypeError`` for a non-ASCII character, which would answer a forgery with a
500 (our bug, an ERROR traceback) instead of the 401 or 403 it deserves; so the comparison is
made on bytes, here, for every adapter.
"""

from __future__ import annotations

import hmac


def as_bytes(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate (from a JSON ``\\ud800`` escape) kept as its bytes."""
    return text.encode("utf-8", "surrogatepass")


def same_secret(given: str, expected: str) -> bool:
    """True when ``given`` (from the request) is ``expected``, compared in constant time; never
    raises for what ``given`` holds."""
    return hmac.compare_digest(as_bytes(given), as_bytes(expected))
