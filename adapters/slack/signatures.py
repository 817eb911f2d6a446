"""Requests to the events URL refused for their signature: 401, and one WARNING line a minute at most.

Bolt verifies each request's signature (a 5-minute window); headers its verifier would raise on
rather than refuse (``unverifiable``) are refused before it. A wrong ``SLACK_SIGNING_SECRET`` is
the first mistake of many a setup: every request Slack sends is then refused. Bolt's own line
for it (INFO) quotes the body and is kept quiet (``QuietLibraries``); ours is the server's line
for a bad request (``bad request to <route> (401): <reason>``), naming the setting, never the
secret nor the body. Anyone can send forged requests by the thousand, so it is said at most once
a minute (``RepeatedWarning``), with how many were refused since.
"""

from __future__ import annotations

import logging
import time

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from clarigate.gateway.runtime.repeated import RepeatedWarning

log = logging.getLogger(__name__)

#: Seconds between a request's timestamp and now past which slack_sdk's verifier refuses it.
SIGNED_WITHIN = 300
REFUSED_LINE_EVERY = 60.0


def unverifiable(headers: Headers) -> bool:
    """True when slack_sdk's ``SignatureVerifier`` (ours, and Bolt's on every route of the events
    URL: events, clicks and submits, slash commands, options) would raise on the signature headers
    instead of saying no: a timestamp that is not ASCII digits (``int()``), a signature with a
    non-ASCII character (``hmac.compare_digest`` on two ``str``). Every copy of each header is
    looked at: Bolt reads the last, Starlette the first. Such a request is a forgery (401)."""
    timestamps = headers.getlist("x-slack-request-timestamp") or [""]
    readable = all(t.isascii() and t.isdigit() for t in timestamps)
    return not readable or not all(s.isascii() for s in headers.getlist("x-slack-signature"))


def why_refused(headers: Headers) -> str:
    """Why a request's signature was refused, in the operator's terms (the copies Bolt reads: the last)."""
    if unverifiable(headers) or not headers.getlist("x-slack-signature"):
        return "signature headers missing or unreadable: not a request from Slack"
    timestamp = int(headers.getlist("x-slack-request-timestamp")[-1])
    if abs(time.time() - timestamp) > SIGNED_WITHIN:
        return "signed more than 5 minutes from this machine's time: a replay, or this clock is wrong"
    return (
        "the signature does not match SLACK_SIGNING_SECRET: set it to the Slack app's Signing Secret "
        "(Basic Information), or the request is not from Slack"
    )


class Refusals:
    """The events URL's refusals for a signature: each answered 401, said at most once a minute."""

    def __init__(self) -> None:
        self._said = RepeatedWarning(log, REFUSED_LINE_EVERY)

    def answer(self, request: Request) -> Response:
        """The 401 for ``request``, after its line (when one is due)."""
        self._said.warning("bad request to %s (401): %s", request.url.path, why_refused(request.headers))
        return PlainTextResponse("invalid signature", status_code=401)
