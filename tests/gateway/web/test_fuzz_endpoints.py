"""Fuzzing every HTTP endpoint: bad input never gets a 5xx, and no response shows a traceback.

Every platform webhook is served as in production (the real adapters, configured with
secrets), beside ``/healthz``, ``/readyz`` and ``/metrics``. Requests come unsigned and signed
(so the parsing behind each signature check is reached too): random bytes, random JSON,
valid payloads with a value swapped for junk, JSON nested past the parser's depth, malformed
headers. Over a real socket: bodies that trickle in or stop before their declared length get
408 once the body timeout passes.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import random
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import uvicorn

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime.app import build_gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.adapters.feishu.events import encrypt
from tests.adapters.feishu.fake_open_api import FakeOpenApi
from tests.adapters.slack.fake_slack import BOT_TOKEN, FakeSlack
from tests.adapters.telegram.fake_bot_api import FakeBotApi

SLACK_SECRET = "fuzz-slack-secret"
FEISHU_KEY = "fuzz-encrypt-key"
FEISHU_TOKEN = "fuzz-verification-token"
TELEGRAM_SECRET = "fuzz-telegram-secret"
REQUESTS_PER_ENDPOINT = 400

WORDS = [
    "type", "event", "challenge", "token", "header", "schema", "encrypt", "event_id", "event_type",
    "update_id", "message", "callback_query", "payload", "actions", "user", "chat", "text", "ts",
    "channel", "team", "id", "data", "value", "from", "action", "open_message_id", "operator",
    "message_id", "content", "sender", "blocks", "view", "state", "values", "thread_ts", "api_app_id",
    "url_verification", "event_callback", "block_actions", "view_submission", "im.message.receive_v1",
]  # fmt: skip

SAMPLES: dict[str, list[Any]] = {
    "/slack/events": [
        {"type": "url_verification", "challenge": "c", "token": "t"},
        {
            "type": "event_callback",
            "team_id": "T1",
            "api_app_id": "A1",
            "event_id": "Ev1",
            "event_time": 1,
            "event": {
                "type": "message",
                "channel": "D1",
                "channel_type": "im",
                "user": "U1",
                "text": "hi",
                "ts": "1800000000.000100",
            },
        },  # fmt: skip
        {
            "type": "block_actions",
            "team": {"id": "T1"},
            "user": {"id": "U1", "name": "u"},
            "channel": {"id": "C1"},
            "container": {"type": "message", "message_ts": "1.2"},
            "actions": [
                {"type": "button", "action_id": "clarify:option", "value": "tok:option-1", "action_ts": "1.3"}
            ],
            "trigger_id": "t",
        },  # fmt: skip
    ],
    "/feishu/events": [
        {"type": "url_verification", "challenge": "c", "token": FEISHU_TOKEN},
        {
            "schema": "2.0",
            "header": {
                "event_id": "e1",
                "event_type": "im.message.receive_v1",
                "token": FEISHU_TOKEN,
                "app_id": "cli_fuzz",
                "tenant_key": "t1",
                "create_time": "1",
            },
            "event": {
                "sender": {"sender_id": {"open_id": "ou_1"}, "sender_type": "user"},
                "message": {
                    "message_id": "om_1",
                    "chat_id": "oc_1",
                    "chat_type": "p2p",
                    "message_type": "text",
                    "content": '{"text":"hi"}',
                },
            },
        },  # fmt: skip
        {
            "schema": "2.0",
            "header": {"event_id": "e2", "event_type": "card.action.trigger", "token": FEISHU_TOKEN},
            "event": {
                "operator": {"open_id": "ou_1"},
                "action": {"value": {"t": "tok", "o": "option-1"}},
                "context": {"open_message_id": "om_1", "open_chat_id": "oc_1"},
            },
        },  # fmt: skip
    ],
    "/telegram/webhook": [
        {
            "update_id": 1,
            "message": {
                "message_id": 1,
                "date": 1,
                "chat": {"id": 5, "type": "private"},
                "from": {"id": 5, "is_bot": False, "first_name": "A"},
                "text": "hi",
            },
        },
        {
            "update_id": 2,
            "callback_query": {
                "id": "q",
                "chat_instance": "ci",
                "data": "tok:option-1",
                "from": {"id": 5, "is_bot": False, "first_name": "A"},
                "message": {"message_id": 3, "date": 1, "chat": {"id": 5, "type": "private"}},
            },
        },
    ],  # fmt: skip
}


def deep_json(depth: int) -> bytes:
    """JSON nested ``depth`` levels (past the parser's recursion limit when large)."""
    return b'{"a":' * depth + b"1" + b"}" * depth


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value."""
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**63, 1.5, 1e308, rng.randrange(-(10**6), 10**6)])
    if kind == 3:
        return rng.choice(["", "x" * rng.randrange(300), "\u0000\ud7ff\u202e", "1.2", "{}", "<@U1>"])
    if kind in (4, 5):
        return rng.choice(WORDS)
    if kind in (6, 7):
        return {rng.choice(WORDS): junk(rng, depth + 1) for _ in range(rng.randrange(6))}
    return [junk(rng, depth + 1) for _ in range(rng.randrange(4))]


def mutate(rng: random.Random, value: Any) -> Any:
    """``value`` with one nested value swapped for junk (or one key dropped)."""
    if isinstance(value, dict) and value:
        value = dict(value)
        key = rng.choice(list(value))
        if rng.random() < 0.2:
            del value[key]
        elif rng.random() < 0.5:
            value[key] = mutate(rng, value[key])
        else:
            value[key] = junk(rng)
        return value
    if isinstance(value, list) and value:
        value = list(value)
        value[rng.randrange(len(value))] = mutate(rng, rng.choice(value))
        return value
    return junk(rng)


def body_for(rng: random.Random, path: str) -> tuple[bytes, str]:
    """A fuzzed body and its content type."""
    choice = rng.randrange(10)
    if choice == 0:
        return rng.randbytes(rng.randrange(2000)), rng.choice(["application/json", "text/plain", ""])
    if choice == 1:
        return deep_json(rng.choice([100, 5000, 100_000])), "application/json"
    if choice == 2:
        return json.dumps(junk(rng)).encode(), "application/json"
    sample = mutate(rng, rng.choice(SAMPLES.get(path) or [{}]))
    if choice == 3:  # a plausible envelope around JSON nested past the parser's depth
        return b'{"type":"event_callback","schema":"2.0","update_id":1,"event":' + deep_json(3000) + b"}", (
            "application/json"
        )
    if path == "/slack/events" and choice in (4, 5):
        inner = json.dumps(sample) if choice == 4 else deep_json(5000).decode()
        form = (
            "payload=" + quote(inner)
            if rng.random() < 0.8
            else rng.choice(["payload=%zz", "payload", "=&&="])
        )
        return form.encode(), "application/x-www-form-urlencoded"
    if path == "/feishu/events" and choice in (4, 5, 6):
        plain = json.dumps(sample).encode() if choice != 5 else deep_json(5000)
        if choice == 6:
            return json.dumps(
                {"encrypt": rng.choice(["", "!!!", "aGVsbG8=", "A" * 32, 5])}
            ).encode(), "application/json"
        return json.dumps({"encrypt": encrypt(plain, FEISHU_KEY)}).encode(), "application/json"
    return json.dumps(sample).encode(), "application/json"


def headers_for(rng: random.Random, path: str, body: bytes, content_type: str) -> dict[str, str]:
    """Valid signatures half the time; otherwise malformed or missing ones."""
    headers = {"content-type": content_type} if content_type else {}
    valid = rng.random() < 0.5
    now = str(int(time.time()))
    bad_numbers = ["abc", "", "-1", "1e10", "9" * 40, "1 2", "0x10", "1_000"]
    if path == "/slack/events":
        ts = now if valid else rng.choice([now, *bad_numbers])
        digest = hmac.new(SLACK_SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
        signature = (
            f"v0={digest}" if valid else rng.choice(["", "v0=", "v1=abc", f"v0={digest}"[:-1], "v0=zz"])
        )
        headers |= {"x-slack-request-timestamp": ts, "x-slack-signature": signature}
        if not valid and rng.random() < 0.3:
            headers.pop("x-slack-request-timestamp")
    elif path == "/feishu/events":
        ts = now if valid else rng.choice([now, *bad_numbers])
        nonce = uuid.uuid4().hex
        digest = hashlib.sha256((ts + nonce + FEISHU_KEY).encode() + body).hexdigest()
        headers |= {
            "x-lark-request-timestamp": ts,
            "x-lark-request-nonce": nonce if valid else rng.choice(["", nonce]),
            "x-lark-signature": digest if valid else rng.choice(["", "zz", digest.upper()]),
        }
    elif path == "/telegram/webhook":
        secret = TELEGRAM_SECRET if valid else rng.choice(["", "wrong", TELEGRAM_SECRET + "x"])
        headers["x-telegram-bot-api-secret-token"] = secret
    return headers


@pytest.fixture
async def served() -> AsyncIterator[tuple[Any, str]]:
    """The whole app with every platform's webhook, over a real socket (uvicorn on port 0), its
    platform clients pointed at the fake platform APIs."""
    slack, telegram, feishu = FakeSlack(), FakeBotApi(), FakeOpenApi().start()
    await slack.start()
    await telegram.start()
    config = GatewayConfig(
        slack={"bot_token": BOT_TOKEN, "signing_secret": SLACK_SECRET, "api_url": slack.api_url},
        feishu={
            "app_id": f"cli_{uuid.uuid4().hex[:10]}",
            "app_secret": "fuzz-secret",
            "verification_token": FEISHU_TOKEN,
            "encrypt_key": FEISHU_KEY,
            "domain": feishu.url,
        },
        telegram={
            "bot_token": telegram.token,
            "webhook_secret": TELEGRAM_SECRET,
            "webhook_url": "https://bot.example/telegram/webhook",
            "api_url": telegram.base_url,
        },
        body_timeout_seconds=1.0,
    )
    gateway = build_gateway(config, store=MemoryStore("fuzz"), runner=ScriptedRunner())
    for adapter in gateway.adapters:  # Slack's receives once signed in, as the lifespan's start does
        if adapter.platform == "slack":
            await adapter.start()
    app = build_app(gateway)
    server = uvicorn.Server(
        uvicorn.Config(
            # no log_config, log_level or access_log=False: uvicorn would change its loggers for
            # every later test
            app,
            host="127.0.0.1",
            port=0,
            lifespan="off",
            log_config=None,
            log_level=None,
        )
    )
    task = asyncio.create_task(server.serve())
    for _ in range(1000):  # up to 10 s
        if server.started:
            break
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield gateway, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        for adapter in gateway.adapters:
            await adapter.stop()
        await slack.stop()
        await telegram.stop()
        feishu.close()


async def test_fuzzed_requests_to_every_endpoint_never_get_5xx_or_a_traceback(served) -> None:
    gateway, url = served
    paths = [route.path for adapter in gateway.adapters for route in adapter.routes()]
    assert sorted(paths) == ["/feishu/events", "/slack/events", "/telegram/webhook"]
    rng = random.Random(20261201)
    failures: list[str] = []
    sent = 0
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for path in [*paths, "/healthz", "/readyz", "/metrics", "/nowhere"]:
            for _ in range(REQUESTS_PER_ENDPOINT if path in paths else 40):
                body, content_type = body_for(rng, path)
                headers = headers_for(rng, path, body, content_type)
                method = "POST" if path in paths else rng.choice(["GET", "POST", "PUT"])
                response = await http.request(method, path, content=body, headers=headers)
                sent += 1
                if response.status_code >= 500 or "Traceback" in response.text:
                    failures.append(f"{path} {response.status_code}: {body[:80]!r} {headers}")
    assert sent >= 3 * REQUESTS_PER_ENDPOINT
    assert failures == [], "\n".join(failures)


def post_head(path: str, length: int) -> bytes:
    """A request head with the platform headers that let each endpoint go on to read the body."""
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"
        f"X-Slack-Request-Timestamp: {int(time.time())}\r\nX-Slack-Signature: v0=00\r\n"
        f"X-Telegram-Bot-Api-Secret-Token: {TELEGRAM_SECRET}\r\n\r\n"
    ).encode()


async def raw_request(url: str, head: bytes, chunks: list[bytes], pause: float) -> bytes:
    """Send ``head`` then ``chunks`` ``pause`` seconds apart over a raw socket; the response."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(head)
        await writer.drain()
        for chunk in chunks:
            await asyncio.sleep(pause)
            if reader.at_eof():
                break
            writer.write(chunk)
            await writer.drain()
        return await asyncio.wait_for(reader.read(65536), 30)
    finally:
        writer.close()


@pytest.mark.parametrize("path", ["/slack/events", "/feishu/events", "/telegram/webhook"])
async def test_a_trickled_body_gets_408(served, path: str) -> None:
    _, url = served
    response = await raw_request(
        url, post_head(path, 40), [b"{"] + [b" "] * 39, pause=0.1
    )  # 4 s for 40 bytes
    assert response.startswith(b"HTTP/1.1 408"), response[:200]


@pytest.mark.parametrize("path", ["/slack/events", "/feishu/events", "/telegram/webhook"])
async def test_a_body_cut_off_before_its_declared_length_gets_408(served, path: str) -> None:
    _, url = served
    response = await raw_request(url, post_head(path, 500) + b'{"type": "url_ver', [], pause=0)
    assert response.startswith(b"HTTP/1.1 408"), response[:200]


async def test_malformed_header_lines_get_4xx(served) -> None:
    _, url = served
    for head in (
        b"POST /slack/events HTTP/1.1\r\nHost: x\r\nX-Slack-Request-Timestamp: \xff\xfe\r\n"
        b"Content-Length: 2\r\n\r\n{}",
        b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}",
        b"POST /feishu/events HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n",
    ):
        response = await raw_request(url, head, [], pause=0)
        status = int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else 0
        assert 400 <= status < 500, response[:200]
