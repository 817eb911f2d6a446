"""A conversation has one open question, also when an answer and another member's request cross:
the agent's newer question (of anyone) closes the older one, whose message shows it closed, and a
later click on it runs nothing."""

from __future__ import annotations

import asyncio
import json

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld


def questions(world) -> list[dict]:
    """The questions the bot posted (with their ts), oldest first."""
    return [
        {**c.params, "ts": c.answer["ts"]}
        for c in world.fake.calls
        if c.method == "chat.postMessage"
        and c.answer.get("ok")
        and "clarigate:o1" in json.dumps(c.params.get("blocks"))
    ]


async def _crossed(make_world: MakeWorld, action_id: str):
    """Alice's question is answered (``action_id``) while Bob's request runs in her thread; Bob's
    run asks him a question, then Alice's answer's run asks her one."""
    release = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:  # Alice's answer: the agent asks her a follow-up
            return asking(choice_request("Which region?", ["eu", "us"]))
        if "deploy" in turn.text and "[From" not in turn.text:
            return asking(choice_request("Which framework?", ["React", "Vue"]))
        await release.wait()  # Bob's request takes a while, and asks Bob something
        return asking(choice_request("Which log level?", ["info", "debug"]))

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    _, ts = await world.user.mention("deploy", user="U1")
    await world.settle()
    (framework,) = questions(world)

    await world.user.channel_message("summarize the logs", user="U2", thread_ts=ts)
    for _ in range(100):  # Bob's run has started
        if len(runner.calls) == 2:
            break
        await asyncio.sleep(0.02)
    await world.user.click(framework, action_id, user="U1")  # Alice answers meanwhile
    release.set()
    await world.settle()
    return runner, world


async def _only_the_newest_is_open(runner: ScriptedRunner, world) -> None:
    _, log_level, region = questions(world)
    closed = world.fake.edits(log_level["ts"])
    assert closed, "the older question still shows its buttons"
    assert not [b for b in closed[-1]["blocks"] if b["type"] == "actions"]
    assert "replaced by a newer question to <@U1>" in json.dumps(closed[-1]["blocks"])
    assert world.fake.edits(region["ts"]) == []  # the newest stays open
    calls = len(runner.calls)
    await world.user.click(log_level, "clarigate:o1", user="U2")
    await world.settle()
    assert len(runner.calls) == calls, "a click on the replaced question still ran the agent"
    await world.user.click(region, "clarigate:o1", user="U1")
    await world.settle()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "eu"


async def test_an_answer_that_crosses_a_request_leaves_one_open_question(make_world: MakeWorld):
    runner, world = await _crossed(make_world, "clarigate:o2")
    assert [c.response.value for c in runner.calls if c.response] == ["Vue"]
    await _only_the_newest_is_open(runner, world)


async def test_a_cancel_that_crosses_a_request_leaves_one_open_question(make_world: MakeWorld):
    runner, world = await _crossed(make_world, "clarigate:decline")
    assert [c.response.response_kind for c in runner.calls if c.response] == ["declined"]
    await _only_the_newest_is_open(runner, world)
