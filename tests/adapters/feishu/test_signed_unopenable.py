"""A body Feishu documents for an Encrypt Key (``{"encrypt": "<base64 of AES-256-CBC>"}``), signed
with ours, is refused for what is wrong with it when it cannot be opened: its ``encrypt`` not a
string, its content not text or not JSON. Its signature proved FEISHU_ENCRYPT_KEY, so the answer
does not send the operator to that setting, and each such request is the server's one warning line,
as other wrong-shape bodies are. Only an unsigned body that cannot be opened may be under another
key, and keeps naming the setting (test_webhook_refusals.py)."""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .events import ENCRYPT_KEY, VERIFICATION_TOKEN, encrypt, legacy_card_action, message_event

ROUTE = "/feishu/events"


def signed_with_our_key(body: bytes) -> dict[str, str]:
    """Feishu's signature headers over ``body``: SHA-256 of timestamp + nonce + Encrypt Key + body."""
    ts, nonce = str(int(time.time())), uuid.uuid4().hex
    digest = hashlib.sha256((ts + nonce + ENCRYPT_KEY).encode() + body).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-Lark-Request-Timestamp": ts,
        "X-Lark-Request-Nonce": nonce,
        "X-Lark-Signature": digest,
    }


def sealed(content: bytes) -> bytes:
    return json.dumps({"encrypt": encrypt(content)}).encode()


UNOPENABLE: dict[str, tuple[bytes, str]] = {
    "encrypt a number": (b'{"encrypt": 12345}', "encrypted body whose `encrypt` is not a string"),
    "encrypt an object": (
        json.dumps({"encrypt": {"data": encrypt(b"{}")}}).encode(),
        "encrypted body whose `encrypt` is not a string",
    ),
    "encrypt not base64": (
        b'{"encrypt": "not base64 at all!"}',
        "encrypted body whose `encrypt` is not base64 of AES-256-CBC blocks with PKCS#7 padding",
    ),
    "content not UTF-8": (
        sealed(b'{"text": "\xff\xfe"}'),
        "encrypted body whose content is not text (UTF-8)",
    ),
    "content not JSON": (
        sealed(json.dumps(message_event("hi")).encode()[:-1]),
        "encrypted body whose content is not JSON",
    ),
}


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize(("body", "reason"), UNOPENABLE.values(), ids=UNOPENABLE.keys())
async def test_a_body_signed_with_our_key_that_cannot_be_opened_is_400_naming_what_is_wrong(
    make_bot, caplog, body: bytes, reason: str
):
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    with caplog.at_level(logging.INFO):
        first = await bot.http.post(ROUTE, content=body, headers=signed_with_our_key(body))
        second = await bot.http.post(ROUTE, content=body, headers=signed_with_our_key(body))

    for response in (first, second):
        assert response.status_code == 400, response.text
        assert response.json() == {"error": reason}
    line = f"bad request to {ROUTE} (400): {reason}"
    assert warnings(caplog) == [line, line]  # not the rate-limited line of a possibly wrong key
    assert not any("FEISHU_ENCRYPT_KEY" in message for message in caplog.messages)
    await bot.gateway.drain()
    assert runner.calls == [] and bot.api.shown() == []


@pytest.mark.parametrize(("body", "reason"), UNOPENABLE.values(), ids=UNOPENABLE.keys())
async def test_the_same_body_unsigned_still_names_the_encrypt_key(make_bot, body: bytes, reason: str):
    bot = await make_bot(ScriptedRunner())
    response = await bot.http.post(ROUTE, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith("encrypted body cannot be decrypted with FEISHU_ENCRYPT_KEY")


async def test_an_old_style_callback_signed_with_the_token_under_another_key_names_the_key(make_bot):
    """The Verification Token's SHA-1 signature proves no Encrypt Key: its body, sealed by Feishu
    under the app's real key, may not open under a wrong FEISHU_ENCRYPT_KEY."""
    bot = await make_bot(ScriptedRunner())
    body = json.dumps({"encrypt": encrypt(json.dumps(legacy_card_action({})).encode(), "another")}).encode()
    ts, nonce = str(int(time.time())), uuid.uuid4().hex
    digest = hashlib.sha1((ts + nonce + VERIFICATION_TOKEN).encode() + body).hexdigest()
    headers = {"X-Lark-Request-Timestamp": ts, "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": digest}
    response = await bot.http.post(ROUTE, content=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"].startswith("encrypted body cannot be decrypted with FEISHU_ENCRYPT_KEY")
