"""Who is talking, as a Slack event tells it: the run's speaker names the person by id (Slack's
events carry no name or locale; a person ``users.info`` does not know keeps display_name None,
test_sender_name.py has the names) and the kind of conversation."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld


async def test_the_speaker_names_the_person_and_the_kind_of_conversation(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner, bot_id="helpdesk")
    await world.user.dm("hi", user="U7")
    await world.settle()
    _, top = await world.user.mention("deploy", user="U7", channel="C1")
    await world.settle()
    # a thread reply names its channel_type; an app_mention names none, so its channel id says
    await world.user.channel_message("and the docs", user="U8", channel="C1", thread_ts=top)
    await world.settle()  # runs in two chats go on at once: one at a time keeps their order
    await world.user.mention("hello", user="U7", channel="G5")
    await world.settle()
    dm, mention, reply, unknown = (c.speaker for c in runner.calls)
    assert dm is not None and dm["bot_id"] == "helpdesk"
    assert dm["sender"] == {"user_id": "U7", "display_name": None, "locale": None, "may_answer": True}
    assert dm["conversation"]["chat_type"] == "private" and dm["conversation"]["chat_id"] == "D1"
    assert mention is not None and mention["conversation"]["chat_type"] == "channel"
    assert mention["conversation"]["thread"] == top and mention["conversation"]["workspace"]
    assert reply is not None and reply["sender"]["user_id"] == "U8"
    assert reply["conversation"]["chat_type"] == "channel" and reply["conversation"]["thread"] == top
    assert unknown is not None and unknown["conversation"]["chat_type"] is None


async def test_my_own_message_written_while_the_agent_thought_is_not_someone_elses(make_world: MakeWorld):
    thinking = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "build":
            await thinking.wait()
            return asking(choice_request("Which framework?", ["React", "Vue"]))
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    for _ in range(100):
        if runner.calls:
            break
        await asyncio.sleep(0.02)
    # written before the question was asked: more context, not its answer, and her question stays hers
    await world.user.channel_message("with TypeScript please", user="U1", thread_ts=ts)
    thinking.set()
    await world.settle()
    second = runner.calls[1]
    assert second.text == "with TypeScript please" and second.response is None
    assert second.speaker is not None and second.speaker["sender"]["may_answer"] is True
