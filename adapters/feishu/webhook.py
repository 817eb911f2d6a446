"""Webhook mode: ``POST /feishu/events`` for events and card callbacks.

A request that is not Feishu's, or not of a shape Feishu documents, is refused: ``Rejected``
(400, 401 or 403) or ``MalformedEvent`` (400). A 400 is raised to the server, answered with its
one line. A refusal for the signature (401: a wrong ``FEISHU_ENCRYPT_KEY``, or forged), the
verification token (403: a wrong ``FEISHU_VERIFICATION_TOKEN``, or forged) or an unsigned body that
cannot be decrypted (400: a wrong ``FEISHU_ENCRYPT_KEY``, or junk) is answered here: the server's
line for a bad request (``bad request to <route> (<status>): <reason>``, naming the setting, never
a secret nor the body), but at most once a minute for each status (``RepeatedWarning``: anyone can
send such requests by the thousand), the others at DEBUG.

A group message mentioning someone while the bot's identity is not known yet (``identity``) is
answered 503 with ``Retry-After``: Feishu pushes it again, and it is read once the identity is known.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clarigate.gateway.runtime.repeated import RepeatedWarning

from .identity import IdentityUnknown
from .legacy import is_legacy_card_callback
from .receive import FeishuReceiver
from .verify import (
    CANNOT_OPEN,
    Rejected,
    check_envelope,
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
#: ``Retry-After`` of a message answered 503 while the bot's identity is unknown (``identity``):
#: Feishu documents its own schedule for an event not answered 200 (again after 15 s, 5 min, 1 h,
#: 6 h), not this header; it says when the first push again comes.
IDENTITY_RETRY_AFTER_SECONDS = 15


class Refusals:
    """The events URL's 401, 403 and undecryptable 400: each answered, said at most once a minute
    per status."""

    def __init__(self) -> None:
        self._said = {status: RepeatedWarning(log, REFUSED_LINE_EVERY) for status in (*REFUSAL_ANSWERS, 400)}

    @staticmethod
    def answers(refused: Rejected) -> bool:
        """Whether ``refused`` is answered here: a 401, a 403, or a body that cannot be decrypted
        (unsigned, or signed with the token only: one the key signed is of the wrong shape); other
        400s are the server's."""
        return refused.status in REFUSAL_ANSWERS or refused.reason == CANNOT_OPEN

    def answer(self, refused: Rejected) -> JSONResponse:
        """The answer to ``refused`` (one it ``answers``), after its line (at DEBUG when one was
        said lately). A 400 tells the sender its reason, as the server's answer to one does."""
        line = ("bad request to %s (%d): %s", EVENTS_PATH, refused.status, refused.reason)
        if not self._said[refused.status].warning(*line):
            log.debug(*line)
        text = REFUSAL_ANSWERS.get(refused.status, refused.reason)
        return JSONResponse({"error": text}, status_code=refused.status)


def events_route(receiver: FeishuReceiver, verification_token: str | None, encrypt_key: str | None) -> Route:
    """The Starlette route verifying, decrypting and handing events to ``receiver``."""
    refusals = Refusals()

    async def feishu_events(request: Request) -> JSONResponse:
        body = await request.body()
        try:
            payload = authenticated_payload(request.headers, body, verification_token, encrypt_key)
        except Rejected as refused:
            if not refusals.answers(refused):
                raise  # unreadable (400): the server's line
            return refusals.answer(refused)
        if payload.get("type") == "url_verification":  # echoed at once: Feishu allows 1 s
            return JSONResponse({"challenge": payload.get("challenge")})
        try:
            reply = await receiver.handle(payload)
        except IdentityUnknown as later:  # said by the receiver (once until the identity is known)
            headers = {"Retry-After": str(IDENTITY_RETRY_AFTER_SECONDS)}
            return JSONResponse({"error": f"service unavailable: {later}"}, status_code=503, headers=headers)
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
    A 2.0 envelope with no header object or no event type is 400 (``check_envelope``): signed, before
    its token is looked for in the header it lacks.
    """
    key_proven = False
    if encrypt_key and headers.get("x-lark-signature"):
        key_proven = check_signed_before_opening(headers, body, encrypt_key, verification_token)
    payload = parse_body(body, encrypt_key, key_proven)  # signed with the key: wrong shape, not key
    if is_legacy_card_callback(payload):
        if verification_token:
            check_legacy_card_signature(headers, body, verification_token)
        elif encrypt_key:
            check_signature(headers, body, encrypt_key)
        return payload
    if payload.get("type") != "url_verification" and encrypt_key:
        check_signature(headers, body, encrypt_key)
        check_envelope(payload)  # signed: a wrong shape is malformed (400), not a forgery (403)
    check_token(payload, verification_token)
    check_envelope(payload)
    return payload
