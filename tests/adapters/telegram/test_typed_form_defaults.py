"""A typed interrupt's fields with defaults on Telegram's step-by-step form: each step shows its hint
(description, a number's range) whether or not it shows a value, also when the form is asked again;
and "⌫ Clear" is offered only where emptying takes effect (not on a default the graph would take
again, not on a checkbox), so the summary shows what the graph gets. Real python-telegram-bot
against the fake Bot API, a real LangGraph graph resumed with what the gateway sent."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import AgentSettings, TurnOutput
from clarigate.agent.protocol import FormField
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .harness import message_update, open_bench
from .test_form_details import Form as PlainForm
from .test_typed_forms import Form

RESUMED: list[Any] = []


class Deploy(BaseModel):
    """Where and how to deploy."""

    region: str = Field("eu-west-1", description="Where it runs")
    replicas: int = Field(3, ge=1, le=5, description="Between 1 & 5")
    dry_run: bool = True
    team: str | None = Field(None, description="Who owns it")


def _deploy(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Set up the deployment", response_schema=Deploy.model_json_schema())
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"Deployed: {json.dumps(answer, sort_keys=True)}")]}


deploy = StateGraph(MessagesState).add_node("deploy", _deploy).add_edge(START, "deploy").compile()


async def _opened(bot_api: Any, tmp_path: Any) -> tuple[Any, Any, Any]:
    RESUMED.clear()
    graph = f"{__name__}:deploy"
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=graph))
    store = MemoryStore(f"typed-defaults-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    await tg.deliver(message_update("deploy"))
    return tg, runner, store


def _labels(bot_api: Any) -> list[str]:
    markup = bot_api.of("editMessageText")[-1].params.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return [b["text"] for row in markup.get("inline_keyboard", []) for b in row]


async def test_every_step_shows_its_hint_also_with_a_value_and_when_asked_again(bot_api, tmp_path):
    tg, runner, store = await _opened(bot_api, tmp_path)
    try:
        form = Form(tg, bot_api)
        await form.tap("form")
        assert "1/4 · Region" in form.shown and "<i>Where it runs</i>" in form.shown
        assert "→ eu-west-1" in form.shown
        await form.tap("k")
        assert "2/4 · Replicas" in form.shown and "→ 3" in form.shown
        assert "<i>Between 1 &amp; 5 · 1 to 5</i>" in form.shown  # escaped, with the range
        assert all(len(c.params["text"]) <= 4096 for c in bot_api.of("editMessageText"))
        await form.type("9")  # out of range: this step asked again with the reason, its hint kept
        assert "2/4 · Replicas" in form.shown and "⚠️ Must be at most 5" in form.shown
        assert "<i>Between 1 &amp; 5 · 1 to 5</i>" in form.shown and "→ 3" in form.shown
        await form.tap("k", "k", "k", "S")  # replicas kept at 3, dry run kept, team skipped
        assert RESUMED == [{"region": "eu-west-1", "replicas": 3, "dry_run": True}]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_a_form_asked_again_shows_each_steps_hint_with_the_value_given(bot_api, tmp_path):
    tg, runner, store = await _opened(bot_api, tmp_path)
    try:
        await tg.deliver(message_update("replicas: 9"))  # typed as a line, out of range: asked again
        assert RESUMED == []

        again = Form(tg, bot_api)
        assert "Replicas: Must be at most 5" in again.question
        await again.tap("form", "k")
        assert "2/4 · Replicas" in again.shown and "→ 9" in again.shown
        assert "<i>Between 1 &amp; 5 · 1 to 5</i>" in again.shown
        await again.type("4")
        await again.tap("k", "k", "S")
        assert RESUMED == [{"region": "eu-west-1", "replicas": 4, "dry_run": True}]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_clear_is_offered_only_where_emptying_takes_effect(bot_api, tmp_path):
    tg, runner, store = await _opened(bot_api, tmp_path)
    try:
        form = Form(tg, bot_api)
        await form.tap("form")
        assert "1/4 · Region" in form.shown and "⌫ Clear" not in _labels(bot_api)
        await form.tap("c")  # a Clear drawn before (or forged) changes nothing
        await form.tap("k")
        assert "2/4 · Replicas" in form.shown and "⌫ Clear" not in _labels(bot_api)
        await form.tap("k")
        assert "3/4 · Dry Run" in form.shown and "⌫ Clear" not in _labels(bot_api)
        await form.tap("c", "k")
        await form.type("ops")  # team: no default, so emptying it leaves it out for real
        await form.tap("b")
        assert "4/4 · Team" in form.shown and "→ ops" in form.shown and "⌫ Clear" in _labels(bot_api)
        await form.tap("c", "k")
        summary = form.shown
        assert "• Region: eu-west-1" in summary and "• Replicas: 3" in summary
        assert "• Dry Run: Yes" in summary and "• Team: —" in summary
        await form.tap("S")
        assert RESUMED == [{"region": "eu-west-1", "replicas": 3, "dry_run": True}]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


TICK = form_request(
    "Anything else?",
    [FormField(name="notify", label="Notify", type="checkbox")],
    request_id="clarification:form-tick",
)


def _tick(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(TICK)
    return TurnOutput(replies=[f"Noted: {turn.response.values}"])


async def test_a_checkbox_step_offers_no_clear(bench):
    runner = ScriptedRunner(_tick)
    tg = await bench(runner)
    await tg.deliver(message_update("go"))
    form = PlainForm(tg, next(c for c in tg.api.of("sendMessage") if c.markup).result["message_id"])
    await form.tap("form")
    await form.tap("y")
    await form.tap("b")  # back to it: Yes is its answer, ticked; Yes / No change it
    assert "1/1 · Notify" in form.text and "→ Yes" in form.text
    assert "⌫ Clear" not in form.labels and {"✓ Yes", "No"} <= set(form.labels)
    await form.tap("c")
    await form.tap("k")
    assert "• Notify: Yes" in form.text
    await form.tap("S")
    assert runner.calls[-1].response.values == {"notify": True}
