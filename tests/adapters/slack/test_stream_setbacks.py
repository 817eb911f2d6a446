"""Setbacks while a Slack answer streams (agent view): a rate limit on ``chat.appendStream`` only
delays the stream (the next update carries on), a message gone ends live updates as before, and
a tool that failed closes its task card as an error, not as done.

Real Bolt, the real core, the in-process agent and the real slack_sdk against the fake Web API,
which answers a rate limit as Slack documents it (``ratelimited``; HTTP 429 with ``Retry-After``).
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.tools import ToolException, tool

from clarigate.adapters.slack.render import render_reply

from .conftest import MakeWorld
from .test_live_replies import ANSWER, scripted_agent, slowly

AGENT = {"agent_view": True}
APPEND = "chat.appendStream"


def stream_text(world) -> str:
    """The answer text Slack took into the stream (start and appends), in order."""
    taken = [call for call in world.fake.streamed() if call.answer.get("ok")]
    return "".join(c["text"] for call in taken for c in call.params.get("chunks", []) if "text" in c)


def tasks(world) -> list[tuple[str, str]]:
    """The task cards' updates the stream carried, as (title, status), in order."""
    chunks = [c for call in world.fake.streamed() for c in call.params.get("chunks", [])]
    return [(c["title"], c["status"]) for c in chunks if c["type"] == "task_update"]


@pytest.mark.parametrize("refusal", ["ratelimited", "http_429"])
async def test_a_rate_limited_append_only_delays_the_stream(make_world: MakeWorld, tmp_path, refusal: str):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 5.0)]) as agent:
        world = await make_world(agent, slack=AGENT)
        if refusal == "http_429":  # as Slack answers it: HTTP 429, ``Retry-After`` one second
            world.fake.fail_next(1, status=429, retry_after=1, methods={APPEND})
        else:  # ``ok: false``, ``ratelimited``
            world.fake.refuse_next("ratelimited", {APPEND}, count=1)
        await world.user.dm("how did the deploy go?")
        await world.settle()

    attempts = world.fake.attempts(APPEND)
    refused = next(i for i, call in enumerate(attempts) if not call.answer.get("ok"))
    assert len(attempts) > refused + 1  # the stream went on after the rate limit
    streamed = stream_text(world)  # what the rate limit held back came with a later append
    assert ANSWER.startswith(streamed) and len(streamed) > len(ANSWER) // 2, streamed
    (shown,) = world.fake.shown()
    assert shown["text"] == render_reply(ANSWER)[0]


async def test_a_stream_gone_takes_no_more_appends_and_the_reply_still_comes(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 5.0)]) as agent:
        world = await make_world(agent, slack=AGENT)
        world.fake.refuse_next("message_not_found", {APPEND}, count=1)
        await world.user.dm("how did the deploy go?")
        await world.settle()

    (refused,) = world.fake.attempts(APPEND)  # no append after Slack said the message is gone
    assert refused.answer == {"ok": False, "error": "message_not_found"}
    assert world.fake.of("chat.update")[-1]["text"] == render_reply(ANSWER)[0]


async def test_a_failed_tool_closes_its_task_card_as_an_error(make_world: MakeWorld, tmp_path):
    @tool
    async def read_deploy_log(service: str) -> str:
        """Reading the deploy log. Fetches the latest deploy log of a service."""
        await asyncio.sleep(1.2)
        raise ToolException("the deploy log is not reachable")

    @tool
    async def check_canary(service: str) -> str:
        """Checking the canary. Reads the canary's health."""
        await asyncio.sleep(1.2)
        return "green"

    read_deploy_log.handle_tool_error = True  # its error goes back to the model as the tool's answer
    turns = [
        {"content": "", "tool_calls": [{"name": "read_deploy_log", "args": {"service": "docs"}}]},
        {"content": "", "tool_calls": [{"name": "check_canary", "args": {"service": "docs"}}]},
        slowly("The log is unreachable, but the canary is green.", 1.0),
    ]
    async with scripted_agent(tmp_path, turns, [read_deploy_log, check_canary]) as agent:
        world = await make_world(agent, slack=AGENT)
        await world.user.dm("how did the deploy go?")
        await world.settle()

    shown = tasks(world)
    assert ("Reading the deploy log…", "in_progress") in shown
    assert ("Reading the deploy log…", "error") in shown, shown
    assert ("Reading the deploy log…", "complete") not in shown, shown
    assert ("Checking the canary…", "complete") in shown and ("Checking the canary…", "error") not in shown
