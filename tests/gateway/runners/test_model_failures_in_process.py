"""Through the gateway, in process, the built-in agent on the OpenAI stub: a provider refusing or
not answering is one log line naming the provider, status and code (no traceback, no key), and
the person reads words that fit the cause, in their language; a bug of ours keeps its traceback."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import MODEL, Body, Stop, Stub, serving
from tests.log_capture import captured_logs

TURN = "clarigate.gateway.flow.turn"


def _error(status: int, code: str | None, kind: str) -> tuple[int, dict[str, Any]]:
    """The API's error body (``{"error": {message, type, param, code}}``)."""
    return status, {"error": {"message": f"stub says {kind}", "type": kind, "param": None, "code": code}}


UNUSABLE, TOO_LONG, AWAY = "model_unusable", "model_context_too_long", "model_unavailable"
#: OpenAI's answer to a used-up quota (https://platform.openai.com/docs/guides/error-codes).
NO_QUOTA = (
    429,
    {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    },
)
#: OpenAI's words for ``parallel_tool_calls`` sent without ``tools``.
PARALLEL = (
    "Invalid value for 'parallel_tool_calls': "
    "'parallel_tool_calls' is only allowed when 'tools' are specified."
)
CASES = [
    # (stub answer, what the person reads, the line's level and its words, requests made)
    (
        _error(401, "invalid_api_key", "invalid_request_error"),
        UNUSABLE,
        "ERROR",
        "openai 401 invalid_api_key",
        1,
    ),
    (
        _error(400, "context_length_exceeded", "invalid_request_error"),
        TOO_LONG,
        "WARNING",
        "400 context_length",
        1,
    ),
    (
        _error(404, "model_not_found", "invalid_request_error"),
        UNUSABLE,
        "ERROR",
        "openai 404 model_not_found",
        1,
    ),
    (  # a setting naming tool calls is the operator's to fix, not the conversation's history
        (400, {"error": {"message": PARALLEL, "type": "invalid_request_error", "param": None, "code": None}}),
        UNUSABLE,
        "ERROR",
        "openai 400 invalid_request_error (the model's settings",
        1,
    ),
    (_error(429, "rate_limit_exceeded", "requests"), AWAY, "WARNING", "openai 429 rate_limit_exceeded", 3),
    (
        NO_QUOTA,
        "model_out_of_quota",
        "ERROR",
        "429 insufficient_quota (the provider account's quota is used up",
        1,
    ),
    (_error(503, None, "server_error"), AWAY, "WARNING", "openai 503 server_error", 3),
]


async def _say(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch, stub: Stub, text: str
) -> tuple[Any, list[str]]:
    with serving(stub, monkeypatch):
        runner = LangGraphRunner(AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://"))
        try:
            gateway, chat = await make_gateway(MemoryStore("model-failures"), runner)
            with captured_logs([]) as logs:
                await chat.say(text)
                await gateway.drain(timeout=30)
        finally:
            await runner.aclose()
    return chat, logs.lines()


@pytest.mark.parametrize(("failing", "key", "level", "said", "requests"), CASES)
async def test_a_provider_failure_is_one_line_and_words_that_fit_it(
    make_gateway: Any,
    monkeypatch: pytest.MonkeyPatch,
    failing: Any,
    key: str,
    level: str,
    said: str,
    requests: int,
) -> None:
    stub = Stub(failing=failing)
    chat, lines = await _say(make_gateway, monkeypatch, stub, "summarise the report")
    assert chat.texts() == [catalog.text(key)]
    turn = [line for line in lines if f" {TURN}: " in line and "failed" in line]
    assert len(turn) == 1 and f"{level} {TURN}: model call failed" in turn[0] and said in turn[0], lines
    assert not [line for line in lines if "Traceback" in line or "sk-test-not-a-key" in line], lines
    assert len(stub.received) == requests  # retried twice (``MODEL_CALL_RETRIES``) only when it may pass


async def test_a_used_up_quota_is_the_operators_to_fix_in_the_persons_language(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub(failing=NO_QUOTA)
    chat, _ = await _say(make_gateway, monkeypatch, stub, "请帮我总结一下这份报告的内容")
    assert chat.texts() == [catalog.text("model_out_of_quota", "zh")]
    assert len(stub.received) == 1


async def test_an_answer_with_no_choices_is_the_providers_failure(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200 whose ``choices`` is empty (some OpenAI-compatible providers send it): not a bug of ours."""
    usage = {"prompt_tokens": 11, "completion_tokens": 0, "total_tokens": 11}
    empty = {"id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": MODEL}
    stub = Stub(replies=[Body({**empty, "choices": [], "usage": usage})])
    chat, lines = await _say(make_gateway, monkeypatch, stub, "summarise the report")
    assert chat.texts() == [catalog.text(AWAY)]
    turn = [line for line in lines if f" {TURN}: " in line and "failed" in line]
    assert len(turn) == 1 and f"WARNING {TURN}: model call failed" in turn[0], lines
    assert "openai empty_choices (its answer held no choices)" in turn[0], lines
    assert not [line for line in lines if "Traceback" in line], lines


#: An assistant message with no text and no tool call: a 200 the person would read nothing from.
EMPTY = Stop("stop", "")


async def test_an_empty_answer_is_asked_for_again(make_gateway: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = Stub(replies=[EMPTY, "The report says sales grew 4%."])
    chat, lines = await _say(make_gateway, monkeypatch, stub, "summarise the report")
    assert chat.texts() == ["The report says sales grew 4%."]
    assert len(stub.received) == 2
    assert not [line for line in lines if "failed" in line or "Traceback" in line], lines


@pytest.mark.parametrize(
    ("text", "locale"), [("summarise the report", "en"), ("请帮我总结一下这份报告的内容", "zh")]
)
async def test_an_answer_empty_twice_is_said_not_done(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch, text: str, locale: Any
) -> None:
    """Not "Done: nothing to report.": the model said nothing, which the person is told."""
    stub = Stub(replies=[EMPTY, EMPTY])
    chat, lines = await _say(make_gateway, monkeypatch, stub, text)
    assert chat.texts() == [catalog.text("model_answer_empty", locale)]
    assert len(stub.received) == 2  # one more try, not the provider's retries
    turn = [line for line in lines if f" {TURN}: " in line and "failed" in line]
    assert len(turn) == 1 and f"WARNING {TURN}: model call failed" in turn[0], lines
    assert "openai empty_answer (its answer was empty, twice)" in turn[0], lines
    assert not [line for line in lines if "Traceback" in line], lines


async def test_the_words_are_in_the_persons_language(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub(failing=_error(400, "context_length_exceeded", "invalid_request_error"))
    chat, _ = await _say(make_gateway, monkeypatch, stub, "请帮我总结一下这份报告的内容")
    assert chat.texts() == [catalog.text("model_context_too_long", "zh")]
    assert "/new" in chat.texts()[0]


class BrokenRunner(ScriptedRunner):
    """A bug of ours: the run raises something no provider said."""

    async def run_turn(self, run: RunInput) -> Any:
        raise KeyError("no such field")


async def test_a_bug_of_ours_keeps_its_traceback(make_gateway: Any) -> None:
    gateway, chat = await make_gateway(MemoryStore("model-failures-bug"), BrokenRunner())
    with captured_logs([]) as logs:
        await chat.say("summarise the report")
        await gateway.drain()
    assert chat.texts() == [catalog.text("run_failed")]
    assert any(f"ERROR {TURN}: agent run failed on thread" in line for line in logs.lines()), logs.lines()
    assert "Traceback" in logs.text() and "KeyError: 'no such field'" in logs.text()


async def test_a_provider_that_cannot_be_reached_is_transient(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub()
    with serving(stub, monkeypatch):
        pass  # served, then closed: its port refuses connections
    monkeypatch.setenv("OPENAI_BASE_URL", stub.url)
    runner = LangGraphRunner(AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://"))
    try:
        gateway, chat = await make_gateway(MemoryStore("model-failures-down"), runner)
        with captured_logs([]) as logs:
            await chat.say("summarise the report")
            await gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    assert chat.texts() == [catalog.text("model_unavailable")]
    (line,) = [line for line in logs.lines() if f" {TURN}: " in line and "failed" in line]
    assert f"WARNING {TURN}: model call failed" in line and "openai OpenAIConnectionError" in line, line
    assert "Traceback" not in logs.text()


def test_openai_calls_are_given_their_retries_and_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set by us, not the SDK's defaults: a hung provider fails its call within a minute."""
    from clarigate.agent import models

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    model = models.build_chat_model("openai:gpt-4.1-mini")
    assert model.root_client.max_retries == 2 and model.root_client.timeout == 60.0  # type: ignore[attr-defined]


def test_the_quota_hook_stays_on_the_agents_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another OpenAI model in the process (an operator's tool calling one) keeps its own retries:
    the agent's model stops retrying a used-up quota on connections of its own, not on the
    connection ``langchain_openai`` shares between models of one address and timeout."""
    import openai
    from langchain_openai import ChatOpenAI

    from clarigate.agent import models

    stub = Stub(failing=NO_QUOTA)
    with serving(stub, monkeypatch):
        agents = models.build_chat_model("openai:gpt-4.1-mini")
        others = ChatOpenAI(model=MODEL, **models.call_limits("openai:gpt-4.1-mini"))
        with pytest.raises(openai.RateLimitError):
            others.invoke("summarise the report")
        assert len(stub.received) == 3  # its own retries, as it was built with
        with pytest.raises(openai.RateLimitError):
            agents.invoke("summarise the report")
    assert len(stub.received) == 4  # the agent's: one request, no retry


def test_openai_proxy_is_still_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """``OPENAI_PROXY`` beside the model's own HTTP clients: requests go through it."""
    from clarigate.agent import models

    stub = Stub(replies=["The report says sales grew 4%."])
    with serving(stub, monkeypatch):
        monkeypatch.setenv("OPENAI_PROXY", stub.url.removesuffix("/v1"))  # the stub answers as a proxy
        monkeypatch.setenv("OPENAI_BASE_URL", "http://api.openai.invalid/v1")  # reached only through it
        model = models.build_chat_model("openai:gpt-4.1-mini")
        assert model.invoke("summarise the report").content == "The report says sales grew 4%."
    assert len(stub.received) == 1


def test_a_bare_openai_model_name_stops_at_a_used_up_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    """``LLM_MODEL=gpt-4.1-mini`` (LangChain infers OpenAI) is on the OpenAI SDK as well: a used-up
    quota is one request, not the SDK's retries, and a hung call fails within a minute."""
    import openai

    from clarigate.agent import models

    stub = Stub(failing=NO_QUOTA)
    with serving(stub, monkeypatch):
        model = models.build_chat_model("gpt-4.1-mini")
        with pytest.raises(openai.RateLimitError):
            model.invoke("summarise the report")
    assert len(stub.received) == 1
    assert model.root_client.timeout == 60.0  # type: ignore[attr-defined]
