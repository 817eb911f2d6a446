"""A typed answer that names a member (``<@U3>``) in the bot's channel thread is an answer, not
talk to them: to a free-text question ("Who should review the release?"), or after its writer
picked "Other…" and types in the thread instead. Talk to a member that answers nothing stays
theirs (``test_mentions_of_others``): no run, no word, the question open."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest

from .conftest import MakeWorld, SlackWorld

WHO_REVIEWS = text_request("Who should review the release?", "clarification:who-1")
FRAMEWORK = choice_request("Which framework?", ["React", "Vue"], request_id="clarification:fw-1")


def asks(request: HumanInputRequest):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.endswith("build"):
            return asking(request)
        return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}"])

    return script


async def u1s_question(make_world: MakeWorld, request: HumanInputRequest) -> tuple[SlackWorld, str]:
    """U1 asks in a channel; the bot asks ``request`` in the thread: the world and the thread."""
    world = await make_world(ScriptedRunner(asks(request)))
    world.fake.add_user("U3", display_name="carol")
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    return world, ts


async def status_of(world: SlackWorld, request_id: str) -> str:
    return (await world.gateway.store.get_pending(request_id)).status


async def test_the_askers_reply_naming_a_member_answers_the_free_text_question(make_world: MakeWorld):
    world, ts = await u1s_question(make_world, WHO_REVIEWS)
    question = world.fake.posted()

    await world.user.channel_message("<@U3>", user="U1", thread_ts=ts)
    await world.settle()

    assert [c.response.value for c in world.runner.calls if c.response] == ["@carol"]
    shown = [m["text"] for m in world.fake.shown()]
    assert shown == ["✅ Answered by <@U1>: @carol", "Going with @carol"]
    assert world.fake.edits(question["ts"])[-1]["text"] == "✅ Answered by <@U1>: @carol"
    assert await status_of(world, WHO_REVIEWS.request_id) == "answered"


async def test_after_other_the_reply_naming_a_member_is_the_answer(make_world: MakeWorld):
    world, ts = await u1s_question(make_world, FRAMEWORK)
    await world.user.click(world.fake.posted(), "clarigate:other")  # then types in the thread instead
    await world.settle()

    await world.user.channel_message("whatever <@U3> picks", user="U1", thread_ts=ts)
    await world.settle()

    assert [c.response.value for c in world.runner.calls if c.response] == ["whatever @carol picks"]
    assert world.fake.shown()[-1]["text"] == "Going with whatever @carol picks"
    assert await status_of(world, FRAMEWORK.request_id) == "answered"


async def test_talk_to_a_member_over_the_askers_choice_is_ignored(make_world: MakeWorld):
    world, ts = await u1s_question(make_world, FRAMEWORK)
    posts = len(world.fake.of("chat.postMessage"))

    await world.user.channel_message("<@U3> can you check the backups?", user="U1", thread_ts=ts)
    await world.user.channel_message("<@U3>", user="U2", thread_ts=ts)  # not U2's question to answer
    await world.settle()

    assert len(world.runner.calls) == 1 and world.fake.edits() == []
    assert len(world.fake.of("chat.postMessage")) == posts  # not a word
    assert await status_of(world, FRAMEWORK.request_id) == "pending"
