"""``POST /feishu/events``: only Feishu's signed, fresh, correctly tokened requests reach the agent."""

from __future__ import annotations

import json
import time

from clarigate.adapters.testing import ScriptedRunner

from .events import encrypt, message_event, signed


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
    assert (await bot.deliver(message_event("other key"), key="another-key")).status_code in (400, 401)
    assert (await bot.deliver(wrong_token())).status_code == 403

    body, headers = signed(message_event("unsigned"))
    unsigned = {"Content-Type": "application/json"}
    assert (await bot.http.post("/feishu/events", content=body, headers=unsigned)).status_code == 401
    assert (await bot.http.post("/feishu/events", content=b"{not json", headers=headers)).status_code == 400
    garbage = json.dumps({"encrypt": "bm90IGEgY2lwaGVydGV4dA=="}).encode()
    assert (await bot.http.post("/feishu/events", content=garbage, headers=headers)).status_code == 400

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
    """Feishu re-pushes after 5 s, 5 min, 1 h and 6 h; whether a re-push is signed anew is not
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
