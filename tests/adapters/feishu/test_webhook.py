"""``POST /feishu/events``: only Feishu's signed, fresh, correctly tokened requests reach the agent."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable

import httpx
import pytest
from lark_oapi.core.utils import AESCipher

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.feishu.verify import Rejected, check_age, decrypt
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.http_errors import http_errors

from .conftest import feishu_settings
from .events import (
    ENCRYPT_KEY,
    TENANT,
    encrypt,
    legacy_card_action,
    legacy_signed,
    message_event,
    schema_one_event,
    signed,
)

ROUTE = "/feishu/events"


async def test_url_verification_echoes_the_challenge(make_bot):
    bot = await make_bot()
    challenge = {"challenge": "abc-123", "token": "v-token-123", "type": "url_verification"}
    body = json.dumps({"encrypt": encrypt(json.dumps(challenge).encode())}).encode()
    response = await bot.http.post("/feishu/events", content=body)
    assert response.status_code == 200 and response.json() == {"challenge": "abc-123"}

    wrong = {**challenge, "token": "not-ours"}
    body = json.dumps({"encrypt": encrypt(json.dumps(wrong).encode())}).encode()
    assert (await bot.http.post("/feishu/events", content=body)).status_code == 403


async def test_forged_stale_wrong_token_and_malformed_requests_are_refused(make_bot):
    runner = ScriptedRunner()
    bot = await make_bot(runner)

    assert (await bot.deliver(message_event("forged"), forge=True)).status_code == 401
    assert (await bot.deliver(message_event("stale"), timestamp=time.time() - 9 * 3600)).status_code == 401
    assert (await bot.deliver(message_event("future"), timestamp=time.time() + 3600)).status_code == 401
    assert (await bot.deliver(message_event("other key"), key="another-key")).status_code == 401
    assert (await bot.deliver(wrong_token())).status_code == 403

    body, headers = signed(message_event("unsigned"))
    unsigned = {"Content-Type": "application/json"}
    assert (await bot.http.post("/feishu/events", content=body, headers=unsigned)).status_code == 401
    # the signature covers the raw body and is checked first: another body under it is a forgery
    garbage = json.dumps({"encrypt": "bm90IGEgY2lwaGVydGV4dA=="}).encode()
    for forged in (b"{not json", garbage):
        assert (await bot.http.post("/feishu/events", content=forged, headers=headers)).status_code == 401
    for unreadable in (b"{not json", garbage):  # unsigned (as a challenge may come): unreadable
        assert (
            await bot.http.post("/feishu/events", content=unreadable, headers=unsigned)
        ).status_code == 400

    await bot.gateway.drain()
    assert runner.calls == [] and bot.api.posted() == []

    assert (await bot.deliver(message_event("genuine"))).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["genuine"]


def wrong_token() -> dict:
    """A genuine-looking, signed event carrying someone else's verification token."""
    event = message_event("wrong token")
    event["header"]["token"] = "v-not-ours"
    return event


async def test_signed_event_with_the_wrong_shape_is_a_bad_request(make_bot):
    bot = await make_bot()
    event = message_event("x")
    del event["event"]["message"]
    assert (await bot.deliver(event)).status_code == 400


async def test_a_repush_keeping_its_first_timestamp_is_accepted_and_runs_once(make_bot):
    """Feishu re-pushes after 15 s, 5 min, 1 h and 6 h; whether a re-push is signed anew is not
    documented, so one still carrying the first delivery's timestamp must get through (and
    deduplication, not the clock, keeps it from running twice)."""
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    first = time.time() - 6 * 3600 - 70  # the last re-push, signed when the message was first sent
    event = message_event("deploy", message_id="om_repushed")
    assert (await bot.deliver(event, timestamp=first)).status_code == 200
    again = {**event, "header": {**event["header"], "event_id": "ev-repush-2"}}
    assert (await bot.deliver(again, timestamp=first)).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["deploy"]


@pytest.mark.parametrize("text", ["", "x", '{"challenge": "abc"}', "多字节的文字 " * 40])
def test_bodies_open_as_the_sdks_own_cipher_opens_them(text):
    """The webhook decrypts without loading lark-oapi; what it reads is what the SDK's ``AESCipher``
    reads, and what the SDK refuses it refuses."""
    sealed = encrypt(text.encode())
    assert decrypt(sealed, ENCRYPT_KEY) == AESCipher(ENCRYPT_KEY).decrypt_str(sealed) == text
    short, unaligned = base64.b64encode(b"x" * 16).decode(), base64.b64encode(b"x" * 33).decode()
    for broken in ("", short, unaligned, sealed[:-8]):
        with pytest.raises(ValueError):
            AESCipher(ENCRYPT_KEY).decrypt_str(broken)
        with pytest.raises(ValueError):
            decrypt(broken, ENCRYPT_KEY)


@pytest.mark.parametrize("whom", ["ou_bot", "ou_bob"])
async def test_a_mention_right_after_the_start_waits_for_the_bots_identity(fake_api, whom):
    """The client and the bot's open_id come in the background after the start; a group message
    mentioning someone meanwhile is read once it is known: only a mention of the bot is taken."""
    runner = ScriptedRunner()
    gateway = Gateway(GatewayConfig(workers=1), MemoryStore(f"test-{uuid.uuid4().hex[:8]}"), runner)
    adapter = FeishuAdapter(feishu_settings(fake_api), gateway)
    gateway.register(adapter)
    fake_api.info_hold = threading.Event()
    await gateway.start()
    try:
        assert adapter.still_starting()
        event = message_event("hi", chat="oc_group", chat_type="group")
        mention = {"key": "@_user_1", "id": {"open_id": whom}, "name": "someone", "tenant_key": TENANT}
        event["event"]["message"].update(content=json.dumps({"text": "@_user_1 hi"}), mentions=[mention])
        body, headers = signed(event)
        async with build_app_client(gateway) as http:
            posting = asyncio.create_task(http.post("/feishu/events", content=body, headers=headers))
            await asyncio.sleep(0.3)
            assert not posting.done()  # waiting for the identity
            fake_api.info_hold.set()
            assert (await posting).status_code == 200
        await adapter.startup.wait()
        assert not adapter.still_starting()
        await gateway.drain()
        assert [c.text for c in runner.calls] == (["hi"] if whom == "ou_bot" else [])
    finally:
        fake_api.info_hold.set()
        await gateway.stop(grace=0)


def build_app_client(gateway: Gateway) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gateway")


def raw(headers: dict[str, str], signature: bytes) -> list[tuple[str, bytes]]:
    """``headers`` as sent, with ``X-Lark-Signature`` as the raw bytes ``signature``."""
    return [
        (name, signature if name == "X-Lark-Signature" else value.encode()) for name, value in headers.items()
    ]


#: What Feishu signs: events (with the encrypt key), old-style card callbacks (with the verification token).
SIGNED = {
    "an event": lambda: signed(message_event("forged")),
    "an old-style card callback": lambda: legacy_signed(
        legacy_card_action({"t": "tok", "a": "o1", "l": "zh"})
    ),
}


@pytest.mark.parametrize("sign", SIGNED.values(), ids=SIGNED.keys())
@pytest.mark.parametrize("forged", [b"\xe9" * 64, b"\xff", "签名".encode()], ids=["latin-1", "one", "utf-8"])
async def test_a_signature_with_non_ascii_bytes_is_refused_401_not_500(
    make_bot,
    caplog: pytest.LogCaptureFixture,
    forged: bytes,
    sign: Callable[[], tuple[bytes, dict[str, str]]],
):
    """A forgery is refused, never our failure (an ERROR traceback, a count)."""
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    before = http_errors(ROUTE)
    body, headers = sign()
    with caplog.at_level(logging.INFO):
        response = await bot.http.post(ROUTE, content=body, headers=raw(headers, forged))
    assert response.status_code == 401, response.text
    await bot.gateway.drain()
    assert http_errors(ROUTE) == before and runner.calls == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.parametrize("timestamp", ["nan", "NaN", "inf", "-inf", "infinity", "1e999"])
async def test_a_signed_timestamp_that_is_not_a_finite_number_is_refused(make_bot, timestamp: str):
    """``float("nan")`` parses, and every comparison with NaN is false: it would pass the window."""
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    assert (await bot.deliver(message_event("replayed"), timestamp=timestamp)).status_code == 401
    with pytest.raises(Rejected) as refused:
        check_age(timestamp, now=1_700_000_000.0)
    assert refused.value.status == 401
    await bot.gateway.drain()
    assert runner.calls == []


async def test_a_verification_token_with_a_lone_surrogate_is_refused_403_not_500(make_bot):
    """The URL-verification handshake is unsigned, so anyone can send one; JSON may spell a
    lone surrogate (``\\ud800``), which does not encode as UTF-8."""
    bot = await make_bot()
    body = b'{"type": "url_verification", "challenge": "c", "token": "\\ud800"}'
    before = http_errors(ROUTE)
    response = await bot.http.post(ROUTE, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 403, response.text
    assert http_errors(ROUTE) == before


PLAIN = {"Content-Type": "application/json"}


async def test_an_unsigned_plain_event_is_refused_when_an_encrypt_key_is_set(make_bot):
    """The request anyone can send with curl: an unencrypted ``im.message.receive_v1`` body
    without Feishu's signature headers, naming whoever it likes as the sender."""
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    forged = json.dumps(message_event("run as me", user="ou_attacker"))
    assert (await bot.http.post(ROUTE, content=forged, headers=PLAIN)).status_code == 401
    await bot.gateway.drain()
    assert runner.calls == [] and bot.api.posted() == []


async def test_with_only_the_verification_token_each_plain_event_must_carry_it(make_bot):
    """Feishu's plain mode (no Encrypt Key): bodies come unencrypted and unsigned, and the
    Verification Token each carries (v2 ``header.token``, v1 ``token``) is what tells them apart."""
    runner = ScriptedRunner()
    bot = await make_bot(runner, settings={"encrypt_key": None})
    tokenless = message_event("no token", user="ou_attacker")
    del tokenless["header"]["token"]
    old_style = {**schema_one_event("old style"), "token": "v-not-ours"}
    for forged in (wrong_token(), tokenless, old_style):
        response = await bot.http.post(ROUTE, content=json.dumps(forged), headers=PLAIN)
        assert response.status_code == 403, response.text
    sealed, headers = signed(message_event("sealed"))  # an Encrypt Key this bot does not have
    assert (await bot.http.post(ROUTE, content=sealed, headers=headers)).status_code == 400
    await bot.gateway.drain()
    assert runner.calls == []

    genuine = json.dumps(message_event("genuine"))
    assert (await bot.http.post(ROUTE, content=genuine, headers=PLAIN)).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["genuine"]


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ({"encrypt_key": None, "verification_token": None}, True),
        ({"encrypt_key": None}, False),  # plain mode: the token is checked
        ({"verification_token": None}, False),  # the signature is checked
        ({"encrypt_key": None, "verification_token": None, "mode": "long_connection"}, False),  # no webhook
    ],
)
def test_a_webhook_with_nothing_to_check_requests_by_stops_serve(fake_api, settings, refused):
    """``serve`` refuses such a webhook at start (``clarigate.gateway.runtime.config.startup_problems``)."""
    problems = feishu_settings(fake_api, **settings).startup_problems()
    assert bool(problems) is refused
    assert all("FEISHU_ENCRYPT_KEY" in p and "FEISHU_VERIFICATION_TOKEN" in p for p in problems)
