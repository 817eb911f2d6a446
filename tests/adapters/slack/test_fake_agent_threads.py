"""The fake answers ``assistant.threads.*`` as Slack documents them, to slack_sdk's own methods."""

from __future__ import annotations

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
