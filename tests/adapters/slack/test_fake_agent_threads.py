"""The fake answers ``assistant.threads.*`` as Slack documents them, to slack_sdk's own methods."""

from __future__ import annotations

import asyncio

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from .fake_slack import BOT_TOKEN, FakeSlack

PROMPT = {"title": "Status", "message": "What is running?"}


def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=BOT_TOKEN, base_url=fake.api_url, retry_handlers=[])


async def refused(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SlackApiError) as error:
        await call
    return str(error.value.response["error"])


async def test_status_is_set_and_cleared_and_refused_past_ten_loading_messages(fake_slack: FakeSlack):
    web = client(fake_slack)
    await web.assistant_threads_setStatus(
        channel_id="D1", thread_ts="1.2", status="is working…", loading_messages=["a", "b"]
    )
    assert fake_slack.agent.statuses[("D1", "1.2")]["loading_messages"] == ["a", "b"]
    await web.assistant_threads_setStatus(channel_id="D1", thread_ts="1.2", status="")
    assert fake_slack.agent.statuses == {}
    eleven = [str(n) for n in range(11)]
    call = web.assistant_threads_setStatus(
        channel_id="D1", thread_ts="1.2", status="x", loading_messages=eleven
    )
    assert await refused(call) == "invalid_arguments"
    call = web.assistant_threads_setStatus(channel_id="D1", thread_ts="not-a-ts", status="x")
    assert await refused(call) == "invalid_thread_ts"


async def test_prompts_naming_a_thread_are_silently_dropped_in_an_agent_app(fake_slack: FakeSlack):
    web = client(fake_slack)
    response = await web.assistant_threads_setSuggestedPrompts(
        channel_id="D1", thread_ts="1.2", prompts=[PROMPT]
    )
    assert response["ok"] and fake_slack.agent.prompts == {}  # Slack's documented silent failure
    await web.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[PROMPT], title="Try")
    assert fake_slack.agent.prompts == {"D1": {"title": "Try", "prompts": [PROMPT]}}
    five = web.assistant_threads_setSuggestedPrompts(channel_id="D1", prompts=[PROMPT] * 5)
    assert await refused(five) == "invalid_arguments"
    assert await refused(web.assistant_threads_setSuggestedPrompts(channel_id="C1", prompts=[PROMPT])) == (
        "channel_not_found"
    )


async def test_titles_need_a_dm_thread(fake_slack: FakeSlack):
    web = client(fake_slack)
    await web.assistant_threads_setTitle(channel_id="D1", thread_ts="1.2", title="Deploy plan")
    assert fake_slack.agent.titles == {("D1", "1.2"): "Deploy plan"}
    assert await refused(web.assistant_threads_setTitle(channel_id="D1", thread_ts="1.2", title="")) == (
        "invalid_arguments"
    )


async def test_a_status_goes_after_slacks_timeout_or_a_message_of_the_app_in_its_thread(
    fake_slack: FakeSlack,
):
    """``setStatus``: "A two minute timeout applies, which will cause the status to be removed if
    no message has been sent" (two minutes made short here); a message the app sends ends it."""
    web = client(fake_slack)
    fake_slack.agent.status_timeout = 0.2
    await web.assistant_threads_setStatus(channel_id="D1", thread_ts="1.2", status="is working…")
    await asyncio.sleep(0.4)
    assert fake_slack.agent.statuses == {} and fake_slack.agent.expired == [("D1", "1.2")]
    fake_slack.agent.status_timeout = 120.0
    await web.assistant_threads_setStatus(channel_id="D1", thread_ts="1.2", status="is working…")
    await web.assistant_threads_setStatus(channel_id="D1", thread_ts="1.3", status="is working…")
    await web.chat_postMessage(channel="D1", thread_ts="1.2", text="still working")
    assert list(fake_slack.agent.statuses) == [("D1", "1.3")]  # only the thread posted in
