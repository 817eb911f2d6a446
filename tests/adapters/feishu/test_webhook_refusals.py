"""A request to ``POST /feishu/events`` refused for its signature (401) or its verification token
(403) is said as deploy/README.md promises for a 4xx: one WARNING line ``bad request to <route>
(<status>): <reason>`` naming the setting to check (``FEISHU_ENCRYPT_KEY``,
``FEISHU_VERIFICATION_TOKEN``), never a secret nor the body, and at most one a minute, so a flood of
forged requests cannot fill the log; so is an unsigned body that cannot be decrypted (400: a wrong
``FEISHU_ENCRYPT_KEY``, or junk). The signature covers the raw body, so it is checked before
the body is decrypted: a wrong Encrypt Key shows as the signature not matching it, not as a body
that "cannot be decrypted"."""

from __future__ import annotations

import hashlib
import json
import logging
import time
import uuid

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime import repeated

from .events import ENCRYPT_KEY, VERIFICATION_TOKEN, encrypt, legacy_card_action, message_event, signed

ROUTE = "/feishu/events"
#: What the operator typed instead of the app's Encrypt Key (Feishu keeps using the real one).
TYPO_KEY = "e-key-456-typo"
TEXT = "a person's words"


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def secrets_in_logs(caplog: pytest.LogCaptureFixture, *secrets: str) -> list[str]:
    everything = "\n".join(r.getMessage() for r in caplog.records)
    return [s for s in secrets if s in everything]


async def test_a_wrong_encrypt_key_is_a_401_and_one_warning_naming_the_setting(make_bot, caplog):
    runner = ScriptedRunner()
    bot = await make_bot(runner, settings={"encrypt_key": TYPO_KEY})
    with caplog.at_level(logging.INFO):
        response = await bot.deliver(message_event(TEXT))  # sealed and signed with the app's real key
    assert response.status_code == 401, response.text
    [line] = warnings(caplog)
    assert line.startswith(f"bad request to {ROUTE} (401): ") and "FEISHU_ENCRYPT_KEY" in line
    assert secrets_in_logs(caplog, ENCRYPT_KEY, TYPO_KEY, VERIFICATION_TOKEN, TEXT) == []
    assert "FEISHU_ENCRYPT_KEY" not in response.text  # the sender is told no more than "not signed"
    await bot.gateway.drain()
    assert runner.calls == [] and bot.api.posted() == []


async def test_a_wrong_verification_token_is_a_403_and_one_warning_naming_the_setting(make_bot, caplog):
    runner = ScriptedRunner()
    bot = await make_bot(runner, settings={"encrypt_key": None, "verification_token": "v-token-typo"})
    plain = json.dumps(message_event(TEXT)).encode()  # Feishu's plain mode: the app's real token inside
    with caplog.at_level(logging.INFO):
        response = await bot.http.post(ROUTE, content=plain, headers={"Content-Type": "application/json"})
    assert response.status_code == 403, response.text
    [line] = warnings(caplog)
    assert line.startswith(f"bad request to {ROUTE} (403): ") and "FEISHU_VERIFICATION_TOKEN" in line
    assert secrets_in_logs(caplog, VERIFICATION_TOKEN, "v-token-typo", TEXT) == []
    await bot.gateway.drain()
    assert runner.calls == []


def wrong_token() -> dict:
    event = message_event(TEXT)
    event["header"]["token"] = "v-not-ours"
    return event


def unsigned_under_another_key() -> tuple[bytes, dict[str, str]]:
    """Neither signed nor sealed with our key: unreadable (400), as an unsigned challenge under a
    wrong key is."""
    sealed = encrypt(json.dumps(message_event(TEXT)).encode(), key="another-key")
    return json.dumps({"encrypt": sealed}).encode(), {"Content-Type": "application/json"}


FLOODS = {
    "forged signatures (401)": (401, lambda: signed(message_event(TEXT), forge=True)),
    "sealed with another key (401)": (401, lambda: signed(message_event(TEXT), key="another-key")),
    "wrong verification token (403)": (403, lambda: signed(wrong_token())),
    "unsigned, sealed with another key (400)": (400, unsigned_under_another_key),
}


@pytest.mark.parametrize(("status", "forge"), FLOODS.values(), ids=FLOODS.keys())
async def test_fifty_forged_requests_are_one_warning_line_a_minute(
    make_bot, caplog, monkeypatch, status, forge
):
    now = [1000.0]
    monkeypatch.setattr(repeated, "clock", lambda: now[0])
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    with caplog.at_level(logging.INFO):
        for _ in range(50):
            body, headers = forge()
            assert (await bot.http.post(ROUTE, content=body, headers=headers)).status_code == status
            now[0] += 1  # fifty requests in fifty seconds
        assert len(warnings(caplog)) == 1
        now[0] += 11  # a minute after the first line
        body, headers = forge()
        assert (await bot.http.post(ROUTE, content=body, headers=headers)).status_code == status
    first, second = warnings(caplog)
    assert first.startswith(f"bad request to {ROUTE} ({status}): ")
    assert second.startswith(f"bad request to {ROUTE} ({status}): ") and "49 more like it" in second
    await bot.gateway.drain()
    assert runner.calls == []

    assert (await bot.deliver(message_event("genuine"))).status_code == 200  # still open to Feishu
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["genuine"]


def challenge(token: str = VERIFICATION_TOKEN) -> dict:
    """The URL-verification request Feishu sends when the request URL is saved."""
    return {"challenge": "1b6aef1a-401f-406a-be41-f48911eabcef", "token": token, "type": "url_verification"}


async def test_the_challenge_is_answered_within_a_second_signed_or_not(make_bot):
    """With an Encrypt Key, Feishu documents the challenge as ``{"encrypt": …}`` to answer within
    1 s, and no signature for it: unsigned it is checked by its token, signed by both."""
    bot = await make_bot()
    unsigned = json.dumps({"encrypt": encrypt(json.dumps(challenge()).encode())}).encode()
    started = time.monotonic()
    response = await bot.http.post(ROUTE, content=unsigned, headers={"Content-Type": "application/json"})
    assert time.monotonic() - started < 1.0
    assert response.status_code == 200 and response.json() == {"challenge": challenge()["challenge"]}
    body, headers = signed(challenge())
    response = await bot.http.post(ROUTE, content=body, headers=headers)
    assert response.status_code == 200 and response.json() == {"challenge": challenge()["challenge"]}
    body, headers = signed(challenge(token="v-not-ours"))
    assert (await bot.http.post(ROUTE, content=body, headers=headers)).status_code == 403


async def test_a_challenge_under_a_wrong_encrypt_key_names_the_setting(make_bot, caplog):
    """The operator's first request: saving the request URL in Feishu's console."""
    bot = await make_bot(settings={"encrypt_key": TYPO_KEY})
    body, headers = signed(challenge())
    unsigned = json.dumps({"encrypt": encrypt(json.dumps(challenge()).encode())}).encode()
    with caplog.at_level(logging.INFO):
        assert (await bot.http.post(ROUTE, content=body, headers=headers)).status_code == 401
        plain = {"Content-Type": "application/json"}
        assert (await bot.http.post(ROUTE, content=unsigned, headers=plain)).status_code == 400
        unreadable = await bot.http.post(ROUTE, content=unsigned, headers=plain)
    assert unreadable.status_code == 400  # the sender is told why
    assert unreadable.json()["error"].startswith("encrypted body cannot be decrypted with FEISHU_ENCRYPT_KEY")
    signed_line, unsigned_line = warnings(caplog)  # the second unreadable one: within the minute
    assert "(401)" in signed_line and "FEISHU_ENCRYPT_KEY" in signed_line
    assert "(400)" in unsigned_line and "FEISHU_ENCRYPT_KEY" in unsigned_line
    assert secrets_in_logs(caplog, ENCRYPT_KEY, TYPO_KEY, VERIFICATION_TOKEN) == []


async def test_an_encrypted_old_style_card_callback_signed_with_the_token_is_still_taken(make_bot):
    """lark-oapi's ``CardActionHandler`` opens an encrypted old-style callback and checks its
    SHA-1 signature made with the Verification Token: checking the signature before decrypting
    must not refuse it as not signed with the Encrypt Key."""
    bot = await make_bot()
    inner = json.dumps(legacy_card_action({"t": "gone", "a": "o1", "l": "zh"})).encode()
    body = json.dumps({"encrypt": encrypt(inner)}).encode()
    ts, nonce = str(int(time.time())), uuid.uuid4().hex
    digest = hashlib.sha1((ts + nonce + VERIFICATION_TOKEN).encode() + body).hexdigest()
    headers = {"X-Lark-Request-Timestamp": ts, "X-Lark-Request-Nonce": nonce, "X-Lark-Signature": digest}
    answered = await bot.http.post(ROUTE, content=body, headers=headers)
    assert answered.status_code == 200 and "过期" in answered.json()["toast"]["content"]
