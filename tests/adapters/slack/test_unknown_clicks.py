"""A click on a control clarigate never made (a button on a message from an older deploy, a
garbled ``action_id`` or value) is acknowledged, runs nothing, is logged (debug) and counted once,
and is told to the person who clicked, privately and in their Slack language, as a click on a
question that is gone.

Payloads as Slack documents them: https://api.slack.com/reference/interaction-payloads/block-actions
"""

from __future__ import annotations

import logging

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld
from .test_every_request_answered import ignored
from .test_honest_errors import BUTTON, block_actions

EXPIRED_EN = "This question has expired; send your request again."
EXPIRED_ZH = "该问题已过期，请重新发送请求。"


@pytest.mark.parametrize(
    ("action", "locale", "note"),
    [
        ({**BUTTON, "action_id": "approve_v1", "value": "old|yes"}, "en-US", EXPIRED_EN),  # older deploy
        ({**BUTTON, "action_id": "clarigate-o1"}, "zh-CN", EXPIRED_ZH),  # garbled action_id
        ({**BUTTON, "action_id": "clarigate:o1", "value": "garbled"}, "en-GB", EXPIRED_EN),  # garbled value
    ],
)
async def test_a_click_on_a_control_clarigate_never_made_is_told_privately_and_runs_nothing(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, action: dict, locale: str, note: str
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_user("U1", display_name="Ann", locale=locale)
    before = ignored("block_actions")
    with caplog.at_level(logging.DEBUG, logger="clarigate"):
        response = await world.user.interact(block_actions(**action))
        await world.settle()
    assert response.status_code == 200
    [shown] = world.fake.of("chat.postEphemeral")
    assert (shown["channel"], shown["user"], shown["text"]) == ("C1", "U1", note)
    lines = [r.getMessage() for r in caplog.records if "did not make" in r.getMessage()]
    assert len(lines) == 1 and action["action_id"] in lines[0]
    assert ignored("block_actions") - before == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert runner.calls == [] and world.fake.of("chat.update") == [] and world.fake.of("views.open") == []


async def test_each_unknown_click_gets_one_note(make_world: MakeWorld):
    world = await make_world()
    for _ in range(2):
        await world.user.interact(block_actions(**{**BUTTON, "action_id": "approve_v1"}))
    await world.settle()
    assert [e["text"] for e in world.fake.of("chat.postEphemeral")] == [EXPIRED_EN, EXPIRED_EN]


@pytest.mark.parametrize(("locale", "note"), [("zh-CN", EXPIRED_ZH), ("en-US", EXPIRED_EN)])
async def test_a_click_on_a_question_that_is_gone_is_told_in_the_persons_language(
    make_world: MakeWorld, locale: str, note: str
):
    """A well-formed clarigate button whose question is gone (answered elsewhere and cleared,
    expired, an unknown token): the same private note, in the clicker's Slack language."""
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_user("U1", display_name="Ann", locale=locale)
    response = await world.user.interact(
        block_actions(**{**BUTTON, "action_id": "clarigate:o1", "value": "no-such-token|o1"})
    )
    await world.settle()
    assert response.status_code == 200
    [shown] = world.fake.of("chat.postEphemeral")
    assert (shown["channel"], shown["user"], shown["text"]) == ("C1", "U1", note)
    assert runner.calls == [] and world.fake.of("chat.update") == [] and world.fake.of("views.open") == []
