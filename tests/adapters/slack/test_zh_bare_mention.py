"""Slack's own prompts and box errors for a Chinese speaker: in Chinese, not English."""

from __future__ import annotations

import json

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol.catalog import text

from .conftest import MakeWorld


async def test_a_bare_mention_prompts_in_the_persons_slack_language(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")

    await world.user.mention("", user="U7")  # "@clarigate" alone, in a channel
    await world.settle()

    assert world.fake.posted()["text"] == text("mention_prompt", "zh")


async def test_a_bare_mention_in_a_dm_prompts_in_the_persons_slack_language(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")

    await world.user.dm("<@U0BOT>", user="U7", channel="D7")
    await world.settle()

    assert world.fake.posted()["text"] == text("mention_prompt_direct", "zh")


async def test_a_box_sent_after_its_question_expired_says_so_in_the_questions_language(make_world: MakeWorld):
    """The "Other…" box stays open as long as the person likes; sent once its question is gone
    (expired, or from an earlier deploy: its token unknown), the error under the box says so in
    the question's language, not in English."""
    asked = choice_request("用哪个数据库？", ["Postgres", "MySQL"]).model_copy(update={"locale": "zh"})
    runner = ScriptedRunner(lambda turn: asking(asked) if turn.response is None else TurnOutput())
    world = await make_world(runner)
    await world.user.dm("存数据")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = dict(world.fake.of("views.open")[-1]["view"])
    kept = json.loads(modal["private_metadata"])
    modal["private_metadata"] = json.dumps({**kept, "t": "gone"})  # the question's record is gone

    response = await world.user.submit(
        modal, {"answer": {"value": {"type": "plain_text_input", "value": "SQLite"}}}
    )

    assert response.json() == {"response_action": "errors", "errors": {"answer": text("expired", "zh")}}
