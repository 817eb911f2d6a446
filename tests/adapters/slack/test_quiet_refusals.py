"""A private note Slack refuses because the person is not in the channel (``user_not_in_channel``,
e.g. a guest who left) is one quiet line: no warning, no traceback, no "delivery abandoned"."""

from __future__ import annotations

import logging

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def asks_framework(turn: Turn):
    if turn.response is None and turn.text.endswith("build"):
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


def refusal_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The gateway's own lines (not the per-call line) that speak of the refusal."""
    return [
        r
        for r in caplog.records
        if "user_not_in_channel" in r.getMessage() or "not in channel" in r.getMessage()
        if r.name.startswith("clarigate.") and not r.name.endswith("platform_calls")
    ]


def assert_quiet(caplog: pytest.LogCaptureFixture) -> None:
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert loud == [], [r.getMessage() for r in loud]
    lines = refusal_lines(caplog)
    assert len(lines) == 1 and lines[0].levelno == logging.INFO


async def test_a_refused_notice_after_a_click_is_one_quiet_line(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
):
    world = await make_world(ScriptedRunner(asks_framework))
    await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()
    world.fake.refuse_next("user_not_in_channel", {"chat.postEphemeral"})
    with caplog.at_level(logging.DEBUG):
        response = await world.user.click(question, "clarigate:o1", user="U2")  # not U2's question
        await world.settle()
    assert response.status_code == 200
    assert [c.answer["error"] for c in world.fake.attempts("chat.postEphemeral")] == ["user_not_in_channel"]
    assert_quiet(caplog)


async def test_a_refused_private_reply_is_one_quiet_line_and_not_retried(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
):
    world = await make_world(ScriptedRunner(asks_framework))
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    world.fake.refuse_every("user_not_in_channel", {"chat.postEphemeral"})
    with caplog.at_level(logging.DEBUG):
        await world.user.mention("cancel", user="U2", thread_ts=ts)  # answered privately: not U2's
        await world.settle()
    assert len(world.fake.attempts("chat.postEphemeral")) == 1
    assert_quiet(caplog)
