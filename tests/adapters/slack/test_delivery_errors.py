"""Slack's refusals and troubles reach the core as ``DeliveryFailed``, transient or permanent,
with Slack's own error code: the core retries the first and falls back (a question's text) on the
second, never re-running the agent."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import choice_request
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.boundary.port import DeliveryFailed

from .conftest import slack_settings
from .fake_slack import FakeSlack

CHANNEL = Conversation(platform="slack", workspace="T0TEAM", chat_id="C1", topic="1.1", reply_to="1.1")


@pytest.fixture
async def adapter(fake_slack: FakeSlack) -> AsyncIterator[SlackAdapter]:
    """The adapter alone (no core): ``send`` is what is under test."""
    adapter = SlackAdapter(slack_settings(fake_slack), gateway=None)  # type: ignore[arg-type]
    yield adapter
    await adapter.stop()


def question() -> ClarificationOut:
    request = choice_request("Which framework?", ["React", "Vue"])
    return ClarificationOut(request=request, fallback_text="Which framework?\n1. React\n2. Vue", token="tok")


async def failure(adapter: SlackAdapter, item: object = None) -> DeliveryFailed:
    with pytest.raises(DeliveryFailed) as caught:
        await adapter.send(CHANNEL, item or question())  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize("code", ["invalid_blocks", "channel_not_found", "not_in_channel", "is_archived"])
async def test_a_question_slack_refuses_is_a_permanent_failure(adapter: SlackAdapter, fake_slack, code):
    fake_slack.refuse_next(code, {"chat.postMessage"})
    error = await failure(adapter)
    assert (error.permanent, error.code) == (True, code)
    assert len(fake_slack.attempts("chat.postMessage")) == 1  # a refusal is not retried
    # a channel gone or closed to the bot: the recipient is gone, counted apart from failures
    assert error.chat_refused == (code != "invalid_blocks")


async def test_blocks_slack_would_not_accept_are_refused_as_invalid_blocks(fake_slack: FakeSlack, adapter):
    with pytest.raises(DeliveryFailed) as caught:
        too_long = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}  # limit: 3000
        await adapter.sender.post("C1", "hi", [too_long])
    assert (caught.value.permanent, caught.value.code) == (True, "invalid_blocks")


@pytest.mark.parametrize("code", ["fatal_error", "internal_error", "service_unavailable", "request_timeout"])
async def test_slack_having_trouble_is_a_transient_failure(adapter: SlackAdapter, fake_slack, code):
    fake_slack.refuse_next(code, {"chat.postMessage"})
    error = await failure(adapter, TextReply(text="hello"))
    assert (error.permanent, error.code) == (False, code)


async def test_a_server_error_is_transient_after_one_call(adapter: SlackAdapter, fake_slack: FakeSlack):
    fake_slack.fail_next(10, status=503, methods={"chat.postMessage"})
    error = await failure(adapter)
    assert error.permanent is False and error.code == "fatal_error"
    assert len(fake_slack.attempts("chat.postMessage")) == 1  # no retry in the client: the core decides


async def test_a_rate_limit_carries_slacks_retry_after(adapter: SlackAdapter, fake_slack: FakeSlack):
    fake_slack.fail_next(1, status=429, retry_after=7, methods={"views.open"})
    with pytest.raises(DeliveryFailed) as caught:
        await adapter.sender.open_view("1.2.3", {"type": "modal"})
    assert (caught.value.permanent, caught.value.retry_after, caught.value.code) == (
        False,
        7.0,
        "ratelimited",
    )


async def test_an_unreachable_slack_is_a_transient_network_failure(
    adapter: SlackAdapter, fake_slack: FakeSlack
):
    await fake_slack.stop()
    error = await failure(adapter, TextReply(text="hello"))
    assert (error.permanent, error.code) == (False, "network")
