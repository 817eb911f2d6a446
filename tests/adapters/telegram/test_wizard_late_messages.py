"""A message Telegram delivers late (a webhook call that failed, updates waiting for the poller)
while a form is open: one written before the form was opened is no value of its step, whatever
step it finds. It goes to the core as any message would, which decides (more context when written
before the question, else a message of its own); a value typed once the form shows still counts,
even in the very second the form was opened (``date`` is in whole seconds)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, catalog

from .conftest import redis_store
from .harness import ALICE, bot_message, message_update, private_chat
from .test_wizard import Wizard

NAME = form_request(
    "Name the release",
    [
        FormField(name="name", label="Release name", type="text", required=True),
        FormField(name="notes", label="Notes", type="text"),
    ],
    request_id="clarification:release-name",
)
EARLIER = "also include the changelog"


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "cut a release":
        return asking(NAME)
    if turn.response is None:
        return TurnOutput(replies=[f"You said: {turn.text}"])
    return TurnOutput(replies=[f"Named: {turn.response.values}"])


async def asked_and_opened(
    tg: Any, runner: ScriptedRunner, a_second_later: bool = False
) -> tuple[Any, Wizard]:
    """Alice's request, the question it asks, and its form opened (in a later second than the
    question's own when ``a_second_later``)."""
    await tg.deliver(message_update("cut a release"))
    asked = await tg.gateway.store.pending_for_thread(runner.calls[0].thread_id)
    assert asked is not None
    if a_second_later:
        await asyncio.sleep(max(0.0, int(asked.created_at) + 1.05 - time.time()))
    w = Wizard(tg)
    await w.tap("form")
    assert "1/2 · Release name" in w.shown.params["text"]
    return asked, w


@pytest.mark.parametrize("store_kind", ["memory", "redis"])
async def test_a_message_written_before_the_question_fills_no_step_of_the_form_opened_since(
    bench, redis_prefix, store_kind
):
    runner = ScriptedRunner(script)
    tg = await bench(runner, store=redis_store(redis_prefix) if store_kind == "redis" else None)
    asked, w = await asked_and_opened(tg, runner)
    edits = len(tg.api.of("editMessageText"))

    # written while the agent was still thinking, delivered only now: more context for the agent
    await tg.deliver(message_update(EARLIER, date=int(asked.created_at) - 5))
    assert (runner.calls[-1].text, runner.calls[-1].response) == (EARLIER, None)
    assert all(EARLIER not in e.params["text"] for e in tg.api.of("editMessageText")[edits:])

    # a value typed in the very second the form was opened still fills its step
    opened = await tg.adapter.interactions.forms.load(NAME.request_id, str(ALICE["id"]))
    assert opened is not None
    form = bot_message(w.message_id, private_chat(ALICE))
    await tg.deliver(message_update("v2.0", reply_to=form, date=int(opened.opened_at)))
    assert "2/2 · Notes" in w.shown.params["text"]
    await w.tap("k")  # Skip
    assert "Release name: v2.0" in w.shown.params["text"]
    await w.tap("S")
    answer = runner.calls[-1].response
    assert answer is not None and answer.values == {"name": "v2.0"}


async def test_a_message_written_after_the_question_but_before_the_form_opened_is_no_value(bench):
    """The form takes only what was written while it showed: a message written after the question
    was asked but before "Fill in" was tapped goes to the core, as it would with no form open."""
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    asked, _ = await asked_and_opened(tg, runner, a_second_later=True)
    edits = len(tg.api.of("editMessageText"))

    # sent in the question's own second (after it, for the core), before the form opened
    await tg.deliver(message_update(EARLIER, date=int(asked.created_at)))
    assert (runner.calls[-1].text, runner.calls[-1].response) == (EARLIER, None)
    assert all(EARLIER not in e.params["text"] for e in tg.api.of("editMessageText")[edits:])


async def test_a_message_written_for_an_earlier_step_fills_no_later_one(bench, redis_prefix):
    """Written while the form showed its first step, delivered once the second showed: it is no
    value of the second (the person never saw it), nor does it change the first behind their back.
    The step says so, and what was given stays as it was."""
    runner = ScriptedRunner(script)
    tg = await bench(runner, store=redis_store(redis_prefix))
    _, w = await asked_and_opened(tg, runner)
    opened = await tg.adapter.interactions.forms.load(NAME.request_id, str(ALICE["id"]))
    assert opened is not None
    await asyncio.sleep(max(0.0, int(opened.opened_at) + 1.05 - time.time()))  # a second later
    form = bot_message(w.message_id, private_chat(ALICE))
    await tg.deliver(message_update("v2.0", reply_to=form))
    assert "2/2 · Notes" in w.shown.params["text"]
    calls = len(runner.calls)

    # written in the second the form opened (step 1 showing), delivered after step 2 was drawn
    await tg.deliver(message_update("v2.1", reply_to=form, date=int(opened.opened_at)))
    shown = w.shown.params["text"]
    assert "2/2 · Notes" in shown and "v2.1" not in shown
    assert catalog.text("wizard_written_earlier") in shown
    assert len(runner.calls) == calls  # handled by the form: not a message for the agent either

    await w.tap("k")  # Skip the notes
    assert "Release name: v2.0" in w.shown.params["text"] and "v2.1" not in w.shown.params["text"]
    await w.tap("S")
    answer = runner.calls[-1].response
    assert answer is not None and answer.values == {"name": "v2.0"}
