"""The events URL: signatures, malformed bodies, retries and replays, refusals shown to one person."""

from __future__ import annotations

import json
import time
import uuid

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.redis import RedisStore

from .conftest import MakeWorld
from .slack_user import next_ts, signed_headers

REDIS_URL = "redis://127.0.0.1:6379/0"


def asks_framework(turn: Turn):
    """First turn asks which framework; the answer gets the echo reply."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def test_url_verification_is_answered_with_the_challenge(make_world: MakeWorld):
    world = await make_world()
    body = json.dumps({"token": "legacy", "challenge": "c-123", "type": "url_verification"}).encode()
    response = await world.user.post(body, "application/json")
    assert response.status_code == 200 and response.json() == {"challenge": "c-123"}


async def test_forged_and_stale_signatures_are_refused_with_401(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D1",
        "user": "U1",
        "text": "hi",
        "ts": next_ts(),
    }
    body = json.dumps(
        {"type": "event_callback", "team_id": "T0TEAM", "event_id": "EvF1", "event": event}
    ).encode()

    forged = await world.user.post(body, "application/json", signed_headers(body, secret="not-the-secret"))
    stale = await world.user.post(
        body, "application/json", signed_headers(body, timestamp=int(time.time()) - 360)
    )
    tampered_headers = signed_headers(body)
    tampered = await world.user.post(body.replace(b"hi", b"rm"), "application/json", tampered_headers)
    await world.settle()

    assert [forged.status_code, stale.status_code, tampered.status_code] == [401, 401, 401]
    assert runner.calls == []


async def test_malformed_bodies_are_answered_400(make_world: MakeWorld):
    world = await make_world()
    broken_json = await world.user.post(b'{"type": "event_callback", ', "application/json")
    broken_payload = await world.user.post(b"payload=%7Bnot-json", "application/x-www-form-urlencoded")
    not_utf8 = await world.user.post(b"\xff\xfe\x00", "application/json")
    assert [broken_json.status_code, broken_payload.status_code, not_utf8.status_code] == [400, 400, 400]


async def test_signed_bodies_of_the_wrong_shape_are_400_and_unsigned_ones_401(make_world: MakeWorld):
    world = await make_world()
    form = "application/x-www-form-urlencoded"
    wrong_event = json.dumps({"type": "event_callback", "event": "x", "event_id": "Ev1"}).encode()
    wrong_click = (
        b"payload=" + json.dumps({"type": "block_actions", "actions": "x", "user": {"id": "U1"}}).encode()
    )
    wrong_view = (
        b"payload=" + json.dumps({"type": "view_submission", "view": {}, "user": {"id": "U1"}}).encode()
    )

    signed = [
        await world.user.post(wrong_event, "application/json"),
        await world.user.post(wrong_click, form),
        await world.user.post(wrong_view, form),
    ]
    forged = await world.user.post(wrong_event, "application/json", headers={"X-Slack-Signature": "v0=00"})

    assert [r.status_code for r in signed] == [400, 400, 400]
    assert forged.status_code == 401


async def test_retried_event_runs_once(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    ts = next_ts()
    event = {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": "once", "ts": ts}

    first = await world.user.event(event, event_id="EvSAME")
    retries = [await world.user.event(event, event_id="EvSAME", retry=n) for n in (1, 2, 3)]
    await world.settle()

    assert first.status_code == 200 and all(r.status_code == 200 for r in retries)  # acked, not dropped
    assert [c.text for c in runner.calls] == ["once"]
    assert [m["text"] for m in world.fake.shown()] == ["You said: once"]


def asks_environment(turn: Turn) -> TurnOutput:
    """Asks where to deploy (any typed text answers) on "deploy the docs"; else the echo reply."""
    if turn.response is None and turn.text == "deploy the docs":
        return asking(text_request("Which environment should I deploy to?"))
    return ScriptedRunner().script(turn)


async def test_a_retried_event_written_before_the_question_is_no_answer_to_it(make_world: MakeWorld):
    """Slack retries an event the gateway did not acknowledge: a message written while the agent
    was still thinking comes after the question it then asks, but is more context, never its
    answer (README); what the person writes after the question answers it."""
    runner = ScriptedRunner(asks_environment)
    world = await make_world(runner)
    await world.user.dm("deploy the docs")
    await world.settle()
    question = world.fake.posted()
    asked = await world.gateway.store.pending_for_thread(runner.calls[0].thread_id)
    assert asked is not None and "Which environment" in json.dumps(question["blocks"])

    written = f"{asked.created_at - 5:.6f}"  # its first delivery (and ack) failed
    event = {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "ts": written}
    response = await world.user.event({**event, "text": "also include the changelog"}, retry=1)
    await world.settle()
    assert response.status_code == 200
    assert (runner.calls[-1].text, runner.calls[-1].response) == ("also include the changelog", None)
    assert "Answered by" not in json.dumps(world.fake.edits(question["ts"]))  # the question stays open

    await world.user.dm("staging", ts=f"{time.time():.6f}")  # written now: after the question
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.value == "staging"
    assert "Answered by <@U1>: staging" in json.dumps(world.fake.edits(question["ts"])[-1]["blocks"])


async def test_a_mention_delivered_as_message_and_app_mention_runs_once(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    _, ts = await world.user.mention("do it")
    await world.user.channel_message("<@U0BOT> do it", ts=ts)
    await world.settle()
    assert [c.text for c in runner.calls] == ["do it"]


async def test_retry_of_an_event_whose_first_delivery_was_only_retried_still_runs(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D1",
        "user": "U1",
        "text": "late",
        "ts": next_ts(),
    }
    await world.user.event(event, event_id="EvLOST", retry=2)  # the first delivery never arrived
    await world.settle()
    assert [c.text for c in runner.calls] == ["late"]


async def test_replayed_click_answers_once(make_world: MakeWorld):
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    store = RedisStore(REDIS_URL, prefix)
    runner = ScriptedRunner(asks_framework)
    try:
        world = await make_world(runner, store=store)
        await world.user.dm("build")
        await world.settle()
        question = world.fake.posted()
        click = world.user.click_payload(question, "clarigate:o1")

        replies = [await world.user.interact(click) for _ in range(3)]
        await world.settle()

        assert [r.status_code for r in replies] == [200, 200, 200]
        answers = [c for c in runner.calls if c.response is not None]
        assert len(answers) == 1 and answers[0].response.value == "React"
        assert len(world.fake.edits(question["ts"])) == 1
        assert world.fake.of("chat.postEphemeral") == []  # a replay is silent, not "already answered"
    finally:
        await store.close()
        redis = Redis.from_url(REDIS_URL)
        keys = [key async for key in redis.scan_iter(match=f"{prefix}:*")]
        if keys:
            await redis.delete(*keys)
        await redis.aclose()


async def test_wrong_user_second_click_and_expired_clicks_get_an_ephemeral_and_change_nothing(
    make_world: MakeWorld,
):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()

    await world.user.click(question, "clarigate:o1", user="U2")
    await world.user.click(question, "clarigate:other", user="U2")  # no modal for someone else either
    await world.adapter.idle()  # the modal opens beside the ack
    await world.settle()
    refusals = world.fake.of("chat.postEphemeral")
    assert [(e["user"], e["text"]) for e in refusals] == [
        ("U2", "Only <@U1> can answer this question."),
        ("U2", "Only <@U1> can answer this question."),
    ]
    assert world.fake.edits(question["ts"]) == [] and world.fake.of("views.open") == []

    await world.user.click(question, "clarigate:o2")
    await world.settle()
    await world.user.click(question, "clarigate:o1")  # a second (new) click by the asker
    await world.settle()
    assert world.fake.of("chat.postEphemeral")[-1]["text"] == "You already answered this question."
    await world.user.click(question, "clarigate:o1", user="U2")  # anyone else is told who did
    await world.settle()
    assert world.fake.of("chat.postEphemeral")[-1]["text"] == "Already answered by <@U1>."
    assert len(world.fake.edits(question["ts"])) == 1
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Vue"]

    expired = world.user.click_payload(question, "clarigate:o1")
    expired["actions"][0]["value"] = "no-such-token|o1"
    await world.user.interact(expired)
    await world.settle()
    assert world.fake.of("chat.postEphemeral")[-1]["text"] == (
        "This question has expired; send your request again."
    )
    assert len(world.fake.edits(question["ts"])) == 1


async def test_replayed_modal_submit_answers_once(make_world: MakeWorld):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    submit = world.user.submission_payload(
        modal, {"answer": {"value": {"type": "plain_text_input", "value": "Svelte"}}}
    )

    replies = [await world.user.interact(submit) for _ in range(3)]
    await world.settle()

    assert [(r.status_code, r.content) for r in replies] == [(200, b"")] * 3  # each closes the modal
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Svelte"]
    assert len(world.fake.edits(question["ts"])) == 1
