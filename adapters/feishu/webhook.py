"""Webhook mode: ``POST /feishu/events`` for events and card callbacks.

A request that is not Feishu's, or not of a shape Feishu documents, raises ``BadRequest``
(``Rejected``: 400, 401 or 403; ``MalformedEvent``: 400), answered by the server with one line.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .legacy import is_legacy_card_callback
from .receive import FeishuReceiver
from .verify import check_legacy_card_signature, check_signature, check_token, parse_body

EVENTS_PATH = "/feishu/events"


def events_route(receiver: FeishuReceiver, verification_token: str | None, encrypt_key: str | None) -> Route:
    """The Starlette route verifying, decrypting and handing events to ``receiver``."""

    async def feishu_events(request: Request) -> JSONResponse:
        body = await request.body()
        payload = authenticated_payload(request.headers, body, verification_token, encrypt_key)
        if payload.get("type") == "url_verification":  # echoed at once: Feishu allows 1 s
            return JSONResponse({"challenge": payload.get("challenge")})
        reply = await receiver.handle(payload)
        return JSONResponse(reply if reply is not None else {"msg": "success"})

    return Route(EVENTS_PATH, feishu_events, methods=["POST"])


def authenticated_payload(
    headers: Any, body: bytes, verification_token: str | None, encrypt_key: str | None
) -> dict[str, Any]:
    """The decrypted event once the signature (events) and the verification token check out.

    The URL-verification handshake is not signed by Feishu; it is checked by its token.
    An old-style card callback carries the card's update token where events carry the
    verification token, and is signed with the verification token instead.
    """
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
