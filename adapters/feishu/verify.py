"""Checking that a webhook request comes from Feishu, and opening encrypted bodies.

Done here rather than by the SDK's ``EventDispatcherHandler.do`` because the SDK
has no replay window and answers every failure with 500; Feishu and operators
need 400 (malformed), 401 (bad or stale signature) and 403 (wrong token).

The replay window. Feishu re-pushes an event it saw no 200 for after 15 s, 5 min, 1 h
and 6 h, and documents neither that a re-push is signed anew nor that it is not; the
official SDKs (lark-oapi ``EventDispatcherHandler._verify_sign``, the Go and Node ones)
check no timestamp at all. A 5-minute window would refuse every re-push that kept the
first timestamp, and a message refused that way is lost for good. So a signed request
may be up to ``REPUSH_WINDOW_SECONDS`` old (the whole re-push schedule, with room),
and at most ``FUTURE_SKEW_SECONDS`` ahead of our clock (no re-push comes from the
future). What stops a replay inside the window is deduplication: messages by
``message_id`` and callbacks by their ids, remembered 24 hours, longer than the window.

The signature covers the raw body (Feishu documents that it can be checked without decrypting), so
a signed request is checked before its body is opened (``check_signed_before_opening``): a wrong
``FEISHU_ENCRYPT_KEY`` then shows as a signature that does not match it (401), not as a body that
cannot be decrypted. Each refusal's ``reason`` names the setting to check, never its value. Once
that signature proved the key, a body that still cannot be opened is of the wrong shape, and is
refused naming what is wrong with it (``NOT_SEALED`` and the like), not the key; only one the key
did not sign (unsigned, as the challenge may come, or signed with the Verification Token) may be
sealed under another key (``CANNOT_OPEN``).

Decrypting is Feishu's documented scheme done with pycryptodome, the library lark-oapi's own
``AESCipher`` uses, rather than through the SDK: importing lark-oapi takes seconds of CPU, and
a URL-verification challenge (encrypted too) must be answered within one second of a start.
"""

from __future__ import annotations

import base64
import hashlib
import math
import time
from typing import Any

from Crypto.Cipher import AES
from Crypto.Util.Padding import unpad

from clarigate.gateway.boundary import surrogates
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.boundary.signing import same_secret

#: Signed requests older than this are refused as replays: Feishu's last re-push comes
#: 15 s + 5 min + 1 h + 6 h (about 7.1 hours) after the first delivery.
REPUSH_WINDOW_SECONDS = 8 * 3600
#: Clocks drift; a timestamp further ahead than this is not Feishu's.
FUTURE_SKEW_SECONDS = 300


#: Why a request was refused, in the operator's terms: the setting to check, never its value.
NOT_SIGNED = "signature headers missing: not a request from Feishu"
NOT_OUR_KEY = (
    "the signature does not match FEISHU_ENCRYPT_KEY: set it to the app's Encrypt Key (Events and "
    "callbacks > Encryption strategy), or the request is not from Feishu"
)
NOT_OUR_TOKEN_SIGNATURE = (
    "the signature of an old-style card callback does not match FEISHU_VERIFICATION_TOKEN: set it to "
    "the app's Verification Token, or the request is not from Feishu"
)
NOT_OUR_TOKEN = (
    "the verification token does not match FEISHU_VERIFICATION_TOKEN: set it to the app's "
    "Verification Token (Events and callbacks > Encryption strategy), or the request is not from Feishu"
)
CANNOT_OPEN = (
    "encrypted body cannot be decrypted with FEISHU_ENCRYPT_KEY: set it to the app's Encrypt Key, "
    "or the request is not from Feishu"
)
#: What is wrong with an encrypted body signed with FEISHU_ENCRYPT_KEY (so the key is right).
ENCRYPT_NOT_STRING = "encrypted body whose `encrypt` is not a string"
NOT_SEALED = "encrypted body whose `encrypt` is not base64 of AES-256-CBC blocks with PKCS#7 padding"
CONTENT_NOT_TEXT = "encrypted body whose content is not text (UTF-8)"
CONTENT_NOT_JSON = "encrypted body whose content is not JSON"
#: The length of a SHA-1 hex digest: the signature of an old-style card callback.
SHA1_HEX_LENGTH = 40


class Rejected(BadRequest):
    """A webhook request to refuse with ``status``: unreadable (400), not signed by Feishu (401),
    not carrying our verification token (403)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason, status=status)


def parse_body(body: bytes, encrypt_key: str | None, key_proven: bool = False) -> dict[str, Any]:
    """The event JSON, decrypted when it came as ``{"encrypt": …}``, each lone surrogate made
    U+FFFD (``surrogates``); 400 when unreadable: ``CANNOT_OPEN`` unless a signature made with the
    encrypt key was checked (``key_proven``), then what is wrong with the body."""
    try:
        outer = surrogates.loads(body)
    except (ValueError, RecursionError):  # JSON nested past the parser's depth
        raise Rejected(400, "body is not JSON") from None
    if not isinstance(outer, dict):
        raise Rejected(400, "body is not a JSON object")
    if "encrypt" not in outer:
        return outer
    if not encrypt_key:
        raise Rejected(400, "encrypted body but FEISHU_ENCRYPT_KEY is not set")
    try:
        inner = opened(outer["encrypt"], encrypt_key)
    except Rejected:
        if key_proven:
            raise
        raise Rejected(400, CANNOT_OPEN) from None  # unsigned: perhaps sealed under another key
    if not isinstance(inner, dict):
        raise Rejected(400, "decrypted body is not a JSON object")
    return inner


def opened(encrypted: object, encrypt_key: str) -> Any:
    """The JSON in an ``encrypt`` field; 400 naming what is wrong with it when it cannot be read."""
    if not isinstance(encrypted, str):
        raise Rejected(400, ENCRYPT_NOT_STRING)
    try:
        raw = decrypt_bytes(encrypted, encrypt_key)
    except ValueError:  # base64, IV, block length or padding
        raise Rejected(400, NOT_SEALED) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(400, CONTENT_NOT_TEXT) from None
    try:
        return surrogates.loads(text)
    except (ValueError, RecursionError):
        raise Rejected(400, CONTENT_NOT_JSON) from None


def decrypt(encrypted: str, encrypt_key: str) -> str:
    """An ``encrypt`` field opened (``decrypt_bytes``) as UTF-8 text; ``UnicodeDecodeError`` when not."""
    return decrypt_bytes(encrypted, encrypt_key).decode("utf-8")


def decrypt_bytes(encrypted: str, encrypt_key: str) -> bytes:
    """An ``encrypt`` field opened: base64, then AES-256-CBC under the SHA-256 of the encrypt key,
    the IV first, PKCS#7 padding; ``ValueError`` when it is not that."""
    raw = base64.b64decode(encrypted)
    key = hashlib.sha256(encrypt_key.encode("utf-8")).digest()
    cipher = AES.new(key, AES.MODE_CBC, raw[: AES.block_size])
    return unpad(cipher.decrypt(raw[AES.block_size :]), AES.block_size, style="pkcs7")


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    """Feishu's request signature: plain SHA-256 of timestamp + nonce + key + raw body."""
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()


def signature_headers(headers: Any) -> tuple[str, str, str]:
    """``X-Lark-Request-Timestamp``, ``X-Lark-Request-Nonce`` and ``X-Lark-Signature`` ("" when absent)."""
    return (
        headers.get("x-lark-request-timestamp") or "",
        headers.get("x-lark-request-nonce") or "",
        headers.get("x-lark-signature") or "",
    )


def check_signed_before_opening(
    headers: Any, body: bytes, encrypt_key: str, verification_token: str | None
) -> bool:
    """Refuse (401) a request whose ``X-Lark-Signature`` is none Feishu makes with our secrets, before
    its body is decrypted: SHA-256 with the encrypt key (events, callbacks, a signed challenge) or,
    with a verification token, SHA-1 with it (old-style card callbacks, encrypted or not). Which of
    the two the request had to carry, and how old it may be, is checked once it is opened.
    Whether the encrypt key made it, so that its body was sealed under that key: the one the
    Verification Token signs could have been sealed under another."""
    timestamp, nonce, given = signature_headers(headers)
    if not (timestamp and given):
        raise Rejected(401, NOT_SIGNED)
    if same_secret(given, signature(timestamp, nonce, encrypt_key, body)):
        return True
    if verification_token and same_secret(
        given, legacy_card_signature(timestamp, nonce, verification_token, body)
    ):
        return False
    legacy = verification_token and len(given) == SHA1_HEX_LENGTH
    raise Rejected(401, NOT_OUR_TOKEN_SIGNATURE if legacy else NOT_OUR_KEY)


def check_signature(headers: Any, body: bytes, encrypt_key: str, now: float | None = None) -> None:
    """Refuse (401) a missing, wrong or stale ``X-Lark-Signature``."""
    timestamp, nonce, given = signature_headers(headers)
    if not (timestamp and given):
        raise Rejected(401, NOT_SIGNED)
    if not same_secret(given, signature(timestamp, nonce, encrypt_key, body)):
        raise Rejected(401, NOT_OUR_KEY)
    check_age(timestamp, now)


def legacy_card_signature(timestamp: str, nonce: str, verification_token: str, body: bytes) -> str:
    """The signature of an old-style card callback: SHA-1 of timestamp + nonce + token + raw body.

    (Callbacks of the old "message card request URL" are signed with the Verification
    Token, not the Encrypt Key; lark-oapi's ``CardActionHandler`` checks them so.)
    """
    return hashlib.sha1((timestamp + nonce + verification_token).encode("utf-8") + body).hexdigest()


def check_legacy_card_signature(
    headers: Any, body: bytes, verification_token: str, now: float | None = None
) -> None:
    """Refuse (401) an old-style card callback whose signature is missing, wrong or stale."""
    timestamp, nonce, given = signature_headers(headers)
    if not (timestamp and given):
        raise Rejected(401, NOT_SIGNED)
    expected = legacy_card_signature(timestamp, nonce, verification_token, body)
    if not same_secret(given, expected):
        raise Rejected(401, NOT_OUR_TOKEN_SIGNATURE)
    check_age(timestamp, now)


def check_age(timestamp: str, now: float | None = None) -> None:
    """Refuse (401) a signed timestamp that is not a finite number, older than the re-push
    schedule or ahead of our clock."""
    try:
        sent = float(timestamp)
    except ValueError:
        raise Rejected(401, "timestamp is not a number") from None
    if not math.isfinite(sent):  # "nan" would pass both bounds below: every comparison is false
        raise Rejected(401, "timestamp is not a number")
    age = (time.time() if now is None else now) - sent
    if age > REPUSH_WINDOW_SECONDS or age < -FUTURE_SKEW_SECONDS:
        raise Rejected(401, "timestamp outside the replay window: a replay, or this machine's clock is wrong")


def check_envelope(payload: dict[str, Any]) -> None:
    """Refuse (400) a 2.0 event of the wrong shape: a ``header`` that is not an object (or none, under
    ``"schema": "2.0"``), or one without an ``event_type``: nothing could tell what it is."""
    if "header" not in payload and payload.get("schema") != "2.0":
        return  # schema 1.0, or the URL-verification handshake
    header = payload.get("header")
    if not isinstance(header, dict):
        raise Rejected(400, "event of the wrong shape: a 2.0 event without a header object")
    if not isinstance(header.get("event_type"), str):
        raise Rejected(400, "event of the wrong shape: a 2.0 event header without an event_type")


def check_token(payload: dict[str, Any], verification_token: str | None) -> None:
    """Refuse (403) an event whose verification token is not ours."""
    if not verification_token:
        return
    header = payload.get("header")
    given = header.get("token") if isinstance(header, dict) else payload.get("token")
    if not isinstance(given, str) or not same_secret(given, verification_token):
        raise Rejected(403, NOT_OUR_TOKEN)
