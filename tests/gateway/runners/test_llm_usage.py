"""Model calls and tokens are counted from outside the agent, by model, for the logs and the metrics."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from prometheus_client import REGISTRY

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.usage import count_inline, run_usage


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_a_real_agent_run_is_counted(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "hello"}]))
    runner = LangGraphRunner(AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://"))
    try:
        with run_usage("scripted") as usage:
            output = await runner.run_turn(RunInput("t-usage", "hi"))
    finally:
        await runner.aclose()
    assert output.replies == ["hello"]
    assert usage.calls == 1 and usage.model


async def test_tokens_reported_by_the_provider_are_counted_by_model():
    message = AIMessage(
        content="hi",
        usage_metadata={"input_tokens": 12, "output_tokens": 5, "total_tokens": 17},
    )
    model = GenericFakeChatModel(messages=iter([message, message]))
    before_in = sample("clarigate_llm_tokens_total", model="fake-usage", direction="input")
    before_calls = sample("clarigate_llm_calls_total", model="fake-usage", outcome="ok")
    with run_usage("fake-usage") as usage:
        await model.ainvoke("hello")
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 12, 5)
    assert sample("clarigate_llm_tokens_total", model="fake-usage", direction="input") == before_in + 12
    assert sample("clarigate_llm_calls_total", model="fake-usage", outcome="ok") == before_calls + 1
    await model.ainvoke("outside the block")  # not counted
    assert usage.calls == 1


class CountingExecutor(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor, noting what is handed to it (the callable's qualified name)."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted: list[str] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        # LangChain hands over partial(context.run, handler_method, ...): name the method
        inner = fn.args[0] if getattr(fn, "args", None) else fn
        self.submitted.append(getattr(inner, "__qualname__", repr(inner)))
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("inline", [False, True], ids=["beside acks", "worker process"])
async def test_only_model_calls_reach_the_thread_pool(tmp_path, inline):
    """The usage handlers (the gateway's and the agent's) see a run's model calls, not its graph
    steps, and LangSmith's bookkeeping stays in the loop while tracing is off: at most the
    gateway's model events go to the thread pool (a pause for acks sharing the loop), and none
    in a process that only runs jobs (``count_inline``)."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "hello"}, {"content": "again"}]))
    runner = LangGraphRunner(AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://"))
    await runner.start()
    loop = asyncio.get_running_loop()
    executor = CountingExecutor()
    loop.set_default_executor(executor)
    count_inline(inline)
    try:
        with run_usage("scripted") as usage:
            first = await runner.run_turn(RunInput("t-pool", "hi"))
            second = await runner.run_turn(RunInput("t-pool", "and now?"))
    finally:
        count_inline(False)
        await runner.aclose()
    assert (first.replies, second.replies) == (["hello"], ["again"])
    assert usage.calls == 2
    if inline:
        assert executor.submitted == []
    else:
        assert set(executor.submitted) <= {"UsageHandler.on_chat_model_start", "UsageHandler.on_llm_end"}
        assert len(executor.submitted) <= 2 * usage.calls
