"""Checking that a webhook request comes from Feishu, and opening encrypted bodies.

Done here rather than by the SDK's ``EventDispatcherHandler.do`` because the SDK
has no replay window and answers every failure with 500; Feishu and operators
need 400 (malformed), 401 (bad or stale signature) and 403 (wrong token).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

from lark_oapi.core.utils import AESCipher

#: Signed requests older (or newer) than this are refused as replays.
TIMESTAMP_WINDOW_SECONDS = 300


class Rejected(Exception):
    """A webhook request to refuse with ``status``."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_body(body: bytes, encrypt_key: str | None) -> dict[str, Any]:
    """The event JSON, decrypted when it came as ``{"encrypt": …}``; 400 when unreadable."""
    try:
        outer = json.loads(body)
    except ValueError:
        raise Rejected(400, "body is not JSON") from None
    if not isinstance(outer, dict):
        raise Rejected(400, "body is not a JSON object")
    if "encrypt" not in outer:
        return outer
    if not encrypt_key:
        raise Rejected(400, "encrypted body but no encrypt key configured")
    try:
        inner = json.loads(AESCipher(encrypt_key).decrypt_str(str(outer["encrypt"])))
    except Exception:  # bad base64, padding, UTF-8 or JSON: all mean "not from Feishu with our key"
        raise Rejected(400, "encrypted body cannot be decrypted") from None
    if not isinstance(inner, dict):
        raise Rejected(400, "decrypted body is not a JSON object")
    return inner


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """Feishu's request signature: plain SHA-256 of timestamp + nonce + key + raw body."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()


def check_signature(headers: Any, body: bytes, encrypt_key: str, now: float | None = None) -> None:
    """Refuse (401) a missing, wrong or stale ``X-Lark-Signature``."""
    timestamp = headers.get("x-lark-request-timestamp") or ""
    nonce = headers.get("x-lark-request-nonce") or ""
    given = headers.get("x-lark-signature") or ""
    if not (timestamp and given):
        raise Rejected(401, "signature headers missing")
    if not hmac.compare_digest(signature(timestamp, nonce, encrypt_key, body), given):
        raise Rejected(401, "signature does not match")
    try:
        age = abs((time.time() if now is None else now) - float(timestamp))
    except ValueError:
        raise Rejected(401, "timestamp is not a number") from None
    if age > TIMESTAMP_WINDOW_SECONDS:
        raise Rejected(401, "timestamp outside the replay window")


def check_token(payload: dict[str, Any], verification_token: str | None) -> None:
    """Refuse (403) an event whose verification token is not ours."""
    if not verification_token:
        return
    header = payload.get("header")
    given = header.get("token") if isinstance(header, dict) else payload.get("token")
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), verification_token.encode()):
        raise Rejected(403, "verification token does not match")
