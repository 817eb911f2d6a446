"""A form answered by typing ``name: value`` lines over several messages in a Slack thread: what a
refused reply gave is kept for its person and question, the reply says so, and the next lines
complete it. The real slack-bolt adapter against the fake Slack, the real core."""

from __future__ import annotations

import itertools
from typing import Any

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, catalog
from clarigate.gateway.flow.typed_drafts import draft_key
from tests.conftest import TEST_REDIS_URL, RedisStoreFactory

from .conftest import MakeWorld, SlackWorld

FIELDS = [
    FormField(name="name", label="Project name", type="text", required=True),
    FormField(name="replicas", label="Replicas", type="number", required=True),
]
KEPT_NAME = catalog.text("typed_form_kept", fields="Project name")
NAME_MISSING = "Project name: This field is required"


def _runner() -> ScriptedRunner:
    """``deploy …`` asks the form (a new question each time); its answer is acknowledged."""
    ids = itertools.count(1)

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("deploy"):
            rid = f"clarification:call-deploy-{next(ids)}"
            return asking(form_request("Tell me about the deployment", FIELDS, request_id=rid))
        if turn.response is not None and turn.response.response_kind == "form":
            return TurnOutput(replies=[f"Deploying {turn.response.values}"])
        return TurnOutput(replies=[f"read: {turn.text}"])

    return ScriptedRunner(script)


def _answers(runner: ScriptedRunner) -> list[Any]:
    return [c.response.values for c in runner.calls if c.response is not None]


async def _asked(world: SlackWorld, user: str = "U1") -> str:
    _, ts = await world.user.mention("deploy it", user=user)
    await world.settle()
    return ts


async def _type(world: SlackWorld, text: str, ts: str, user: str = "U1") -> str:
    await world.user.channel_message(text, user=user, thread_ts=ts)
    await world.settle()
    return str(world.fake.last_shown()["text"])


async def test_the_missing_field_typed_alone_completes_the_form(make_world: MakeWorld) -> None:
    runner = _runner()
    world = await make_world(runner)
    ts = await _asked(world)

    told = await _type(world, "name: shop", ts)
    assert told == f"Replicas: This field is required\n{KEPT_NAME}"  # what is missing, what is kept
    assert _answers(runner) == []

    assert await _type(world, "replicas: 3", ts) == "Deploying {'name': 'shop', 'replicas': 3}"
    assert _answers(runner) == [{"name": "shop", "replicas": 3}]


async def test_a_field_given_again_takes_the_new_value_and_an_invalid_one_is_not_kept(
    make_world: MakeWorld,
) -> None:
    runner = _runner()
    world = await make_world(runner)
    ts = await _asked(world)

    told = await _type(world, "name: shop\nreplicas: lots", ts)
    assert told.startswith("Replicas: ") and told.endswith(KEPT_NAME)  # the name is kept, not "lots"
    assert (await _type(world, "name: store", ts)).endswith(KEPT_NAME)
    await _type(world, "replicas: 2", ts)
    assert _answers(runner) == [{"name": "store", "replicas": 2}]


async def test_on_redis_the_kept_lines_live_no_longer_than_the_question_and_go_with_its_answer(
    redis_stores: RedisStoreFactory, make_world: MakeWorld
) -> None:
    runner = _runner()
    store = redis_stores()
    world = await make_world(runner, store=store, pending_ttl_seconds=600)
    ts = await _asked(world)
    key = draft_key("clarification:call-deploy-1", "U1")

    await _type(world, "name: shop", ts)
    assert await store.get_json(key) == {"name": "shop"}
    client = Redis.from_url(TEST_REDIS_URL)
    try:
        assert 0 < await client.pttl(store.keys.state(key)) <= 600_000  # the question's time, at most
    finally:
        await client.aclose()

    await _type(world, "replicas: 3", ts)
    assert _answers(runner) == [{"name": "shop", "replicas": 3}]
    assert await store.get_json(key) is None  # answered: nothing kept

    await world.user.mention("deploy it again", thread_ts=ts)  # another question, the same fields
    await world.settle()
    kept_replicas = catalog.text("typed_form_kept", fields="Replicas")
    assert await _type(world, "replicas: 5", ts) == f"{NAME_MISSING}\n{kept_replicas}"
    assert _answers(runner) == [{"name": "shop", "replicas": 3}]  # the old name did not carry over


async def test_another_members_lines_do_not_fill_in_the_askers_form(make_world: MakeWorld) -> None:
    runner = _runner()
    world = await make_world(runner, answer_policy="anyone")
    ts = await _asked(world, user="U1")

    await _type(world, "name: shop", ts, user="U1")
    told_u2 = await _type(world, "replicas: 3", ts, user="U2")  # U2 may answer, but from nothing
    assert told_u2.startswith(NAME_MISSING)
    assert _answers(runner) == []

    await _type(world, "replicas: 4", ts, user="U1")
    answer = [c.response for c in runner.calls if c.response is not None][-1]
    assert answer.values == {"name": "shop", "replicas": 4}
    assert answer.answered_by is not None and answer.answered_by.user_id == "U1"


async def test_an_ordinary_request_while_a_form_is_half_typed_still_runs_as_a_request(
    make_world: MakeWorld,
) -> None:
    runner = _runner()
    world = await make_world(runner)
    ts = await _asked(world)
    assert (await _type(world, "name: shop", ts)).endswith(KEPT_NAME)

    told = await _type(world, "what is on today", ts)  # no `name: value` line: a new request
    assert told == "read: what is on today"
    assert runner.calls[-1].response is None
    closed = [e["text"] for e in world.fake.edits()]
    assert "✖ Closed: <@U1> sent a new message instead" in closed  # as before

    await world.user.mention("deploy it", thread_ts=ts)  # a new form starts from nothing
    await world.settle()
    assert (await _type(world, "replicas: 3", ts)).startswith(NAME_MISSING)
    assert _answers(runner) == []
