"""Replies as users see them: HTML escaping, splitting, and nothing lost to 429, 5xx or parse errors."""

from __future__ import annotations

import pytest
from telegram.error import BadRequest, NetworkError

from clarigate.adapters.telegram.send import patiently
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import retry
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.runtime.metrics import DELIVERY_RETRIES, PLATFORM_API_ERRORS

from .harness import message_update


def replying(*replies: str) -> ScriptedRunner:
    return ScriptedRunner(lambda turn: TurnOutput(replies=list(replies)))


def errors(kind: str) -> float:
    return PLATFORM_API_ERRORS.labels("telegram", kind)._value.get()


async def test_model_text_is_escaped_and_mentions_neutralized(bench):
    tg = await bench(
        replying("**Done** <script>alert(1)</script> & ping @everyone and @alice [x](tg://user?id=1)")
    )
    await tg.deliver(message_update("go"))
    sent = tg.api.of("sendMessage")[-1].params
    assert sent["parse_mode"] == "HTML"
    assert sent["text"].startswith(
        "<b>Done</b> &lt;script&gt;alert(1)&lt;/script&gt; &amp; ping @\u2060everyone"
    )
    assert "@\u2060alice" in sent["text"] and "<a " not in sent["text"]


async def test_long_reply_is_split_at_paragraphs(bench):
    paragraphs = [f"Paragraph {i}: " + "word " * 150 for i in range(12)]
    tg = await bench(replying("\n\n".join(paragraphs)))
    await tg.deliver(message_update("write a lot"))
    texts = [c.params["text"] for c in tg.api.of("sendMessage")]
    assert len(texts) > 1 and all(len(t) <= 4096 for t in texts)
    assert all(t.startswith("Paragraph ") for t in texts)  # every piece starts at a paragraph
    assert [p.strip() for p in "\n\n".join(texts).split("\n\n")] == [p.strip() for p in paragraphs]


async def test_rate_limit_is_waited_out_and_the_reply_arrives(bench):
    tg = await bench(replying("hello there"))
    before = errors("rate_limited")
    tg.api.fail_next("sendMessage", 429, retry_after=1)
    await tg.deliver(message_update("hi"))
    sends = tg.api.of("sendMessage")
    assert len(sends) == 2 and sends[-1].params["text"] == "hello there"
    assert errors("rate_limited") == before + 1


async def test_server_errors_are_retried(bench):
    tg = await bench(replying("still here"))
    before = errors("server_error")
    tg.api.fail_next("sendMessage", 500, times=2)
    await tg.deliver(message_update("hi"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["still here"] * 3
    assert errors("server_error") == before + 2


async def test_a_dropped_connection_is_counted_as_network_trouble_and_retried(bench):
    """A reset on the way to Telegram is ours to look at, not a 5xx of Telegram's."""
    tg = await bench(replying("still here"))
    network, server = errors("network"), errors("server_error")
    tg.api.drop_next("sendMessage")
    await tg.deliver(message_update("hi"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["still here"] * 2
    assert (errors("network"), errors("server_error")) == (network + 1, server)


async def test_one_server_error_costs_one_call_per_core_attempt(bench, monkeypatch):
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    tg = await bench(replying("still here"))
    retries_before = DELIVERY_RETRIES._value.get()
    tg.api.fail_next("sendMessage", 500)  # then 200
    await tg.deliver(message_update("hi"))
    core_attempts = 1 + DELIVERY_RETRIES._value.get() - retries_before
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["still here"] * 2
    assert len(tg.api.of("sendMessage")) == core_attempts == 2  # no retry inside the adapter
    assert len(waits) == 1  # the core's one wait, no other


async def test_reply_telegram_cannot_parse_is_resent_as_plain_text(bench):
    tg = await bench(replying("**bold** text"))
    tg.api.fail_next("sendMessage", 400, description="Bad Request: can't parse entities: unexpected end tag")
    await tg.deliver(message_update("hi"))
    first, second = tg.api.of("sendMessage")
    assert first.params["parse_mode"] == "HTML"
    assert "parse_mode" not in second.params and second.params["text"] == "**bold** text"


async def test_typing_is_shown_while_the_agent_works(bench):
    tg = await bench(replying("ok"))
    await tg.deliver(message_update("hi"))
    methods = [c.method for c in tg.api.calls if c.method in ("sendChatAction", "sendMessage")]
    assert methods == ["sendChatAction", "sendMessage"]
    assert tg.api.of("sendChatAction")[0].params["action"] == "typing"


async def test_start_up_calls_retry_network_errors_and_not_client_errors():
    attempts: list[str] = []

    async def flaky() -> str:
        attempts.append("try")
        if len(attempts) < 3:
            raise NetworkError("Unknown error in HTTP implementation: ConnectError()")
        return "delivered"

    quick = RetryPolicy(first=0.01, attempts=6)
    assert await patiently(flaky, "getMe", quick) == "delivered"
    assert len(attempts) == 3

    async def refused() -> str:
        attempts.append("bad")
        raise BadRequest("chat not found")

    with pytest.raises(BadRequest):  # raised as PTB raised it
        await patiently(refused, "getMe", quick)
    assert attempts.count("bad") == 1


@pytest.mark.timeout(10)  # the run waited out a 30 s flood wait (up to six) before it started
async def test_a_rate_limited_typing_indicator_does_not_hold_the_run_back(bench):
    tg = await bench(replying("done"))
    tg.api.fail_next("sendChatAction", 429, retry_after=30)
    await tg.deliver(message_update("hi"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["done"]
    assert len(tg.api.of("sendChatAction")) == 1  # cosmetic: tried once, never retried


async def test_addresses_with_an_at_sign_stay_copyable(bench):
    reply = "Mail support@example.com or clone git@github.com:acme/app.git, then ask @alice."
    tg = await bench(replying(reply))
    await tg.deliver(message_update("go"))
    text = tg.api.of("sendMessage")[-1].params["text"]
    assert "support@example.com" in text and "git@github.com:acme/app.git" in text
    assert "@\u2060alice" in text


async def test_a_long_reply_failing_midway_posts_each_piece_once(bench, monkeypatch):
    async def no_wait(seconds: float) -> None:
        return None

    monkeypatch.setattr(retry, "pause", no_wait)
    paragraphs = [f"Paragraph {i}: " + "word " * 150 for i in range(12)]
    tg = await bench(replying("\n\n".join(paragraphs)))
    noted = tg.adapter.sender.on_posted

    async def fail_after_the_first_piece(message) -> None:
        await noted(message)
        if len(tg.api.of("sendMessage")) == 1:
            tg.api.fail_next("sendMessage", 500)  # the second piece fails once

    tg.adapter.sender.on_posted = fail_after_the_first_piece
    await tg.deliver(message_update("write a lot"))
    posted = [c.params["text"] for c in tg.api.of("sendMessage") if c.result is not None]
    assert len(posted) > 2 and len(tg.api.of("sendMessage")) == len(posted) + 1
    # the core's second attempt went on from the second piece: none shown twice, none missing
    assert [p.strip() for p in "\n\n".join(posted).split("\n\n")] == [p.strip() for p in paragraphs]
