"""Webhook mode: ``POST /feishu/events`` for events and card callbacks.

A request that is not Feishu's, or not of a shape Feishu documents, is refused: ``Rejected``
(400, 401 or 403) or ``MalformedEvent`` (400). A 400 is raised to the server, answered with its
one line. A refusal for the signature (401: a wrong ``FEISHU_ENCRYPT_KEY``, or forged) or the
verification token (403: a wrong ``FEISHU_VERIFICATION_TOKEN``, or forged) is answered here: the
server's line for a bad request (``bad request to <route> (<status>): <reason>``, naming the
setting, never a secret nor the body), but at most once a minute for each status
(``RepeatedWarning``: anyone can send forged requests by the thousand), the others at DEBUG.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clarigate.gateway.runtime.repeated import RepeatedWarning

from .legacy import is_legacy_card_callback
from .receive import FeishuReceiver
from .verify import (
    Rejected,
    check_legacy_card_signature,
    check_signature,
    check_signed_before_opening,
    check_token,
    parse_body,
)

log = logging.getLogger(__name__)

EVENTS_PATH = "/feishu/events"
REFUSED_LINE_EVERY = 60.0
#: What the sender of a refused request is told (the settings are named in our log only).
REFUSAL_ANSWERS = {401: "invalid signature", 403: "invalid verification token"}


class Refusals:
    """The events URL's 401 and 403: each answered, said at most once a minute per status."""

    def __init__(self) -> None:
        self._said = {status: RepeatedWarning(log, REFUSED_LINE_EVERY) for status in REFUSAL_ANSWERS}

    def answer(self, refused: Rejected) -> JSONResponse:
        """The answer to ``refused`` (a 401 or 403), after its line (at DEBUG when one was said lately)."""
        line = ("bad request to %s (%d): %s", EVENTS_PATH, refused.status, refused.reason)
        if not self._said[refused.status].warning(*line):
            log.debug(*line)
        return JSONResponse({"error": REFUSAL_ANSWERS[refused.status]}, status_code=refused.status)


def events_route(receiver: FeishuReceiver, verification_token: str | None, encrypt_key: str | None) -> Route:
    """The Starlette route verifying, decrypting and handing events to ``receiver``."""
    refusals = Refusals()

    async def feishu_events(request: Request) -> JSONResponse:
        body = await request.body()
        try:
            payload = authenticated_payload(request.headers, body, verification_token, encrypt_key)
        except Rejected as refused:
            if refused.status not in REFUSAL_ANSWERS:
                raise  # unreadable (400): the server's line
            return refusals.answer(refused)
        if payload.get("type") == "url_verification":  # echoed at once: Feishu allows 1 s
            return JSONResponse({"challenge": payload.get("challenge")})
        reply = await receiver.handle(payload)
        return JSONResponse(reply if reply is not None else {"msg": "success"})

    return Route(EVENTS_PATH, feishu_events, methods=["POST"])


def authenticated_payload(
    headers: Any, body: bytes, verification_token: str | None, encrypt_key: str | None
) -> dict[str, Any]:
    """The decrypted event once the signature (events) and the verification token check out.

    A signed request is checked before its body is opened (the signature covers the raw body).
    The URL-verification handshake is not signed by Feishu's documentation; unsigned, it is
    checked by its token. An old-style card callback carries the card's update token where
    events carry the verification token, and is signed with the verification token instead.
    """
    if encrypt_key and headers.get("x-lark-signature"):
        check_signed_before_opening(headers, body, encrypt_key, verification_token)
    payload = parse_body(body, encrypt_key)
    if is_legacy_card_callback(payload):
        if verification_token:
            check_legacy_card_signature(headers, body, verification_token)
        elif encrypt_key:
            check_signature(headers, body, encrypt_key)
        return payload
    if payload.get("type") != "url_verification" and encrypt_key:
        check_signature(headers, body, encrypt_key)
    check_token(payload, verification_token)
    return payload
