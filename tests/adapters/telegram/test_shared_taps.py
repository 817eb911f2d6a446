"""Taps on a message several people share in a group: a step-by-step form shows one person's form
at a time, and a risk confirmation's "⚠️ Yes: …" confirms one person's pick. A tap counts only for
the person, and the step, its button was drawn for."""

from __future__ import annotations

import json

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, Option, catalog

from .harness import ALICE, BOB, GROUP, callback_update, mention_update
from .test_choices import ask_then_echo, clarification_call


def opts(name: str, *labels: str) -> list[Option]:
    return [Option(id=f"{name}-option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)]


TWO_SELECTS = form_request(
    "Where should it go?",
    [
        FormField(
            name="region", label="Region", type="select", required=True, options=opts("region", "eu", "us")
        ),
        FormField(
            name="environment",
            label="Environment",
            type="select",
            required=True,
            options=opts("environment", "staging", "production"),
        ),
    ],
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and "deploy" in turn.text:
        return asking(TWO_SELECTS)
    if turn.response is not None:
        return TurnOutput(replies=[f"Configured: {turn.response.values}"])
    return TurnOutput(replies=[f"You said: {turn.text}"])


class SharedMessage:
    """The question's message in the group, and taps on the buttons it shows right now."""

    def __init__(self, tg) -> None:
        self.tg = tg
        asked = clarification_call(tg)
        self.message_id = asked.result["message_id"]
        self.first = asked.buttons[0][0]["callback_data"]

    def shown(self) -> tuple[str, dict[str, str]]:
        """The text Telegram shows, and each button's label -> its callback data."""
        text, markup = self.tg.api.messages[(GROUP["id"], self.message_id)]
        rows = json.loads(markup or "{}").get("inline_keyboard", [])
        return text, {b["text"]: b["callback_data"] for row in rows for b in row}

    async def tap(self, label: str, who: dict) -> str | None:
        """``who`` taps the button labelled ``label`` as shown; what the tap's answer said."""
        await self.tap_data(self.shown()[1][label], who)
        return self.tg.api.of("answerCallbackQuery")[-1].params.get("text")

    async def tap_data(self, data: str, who: dict) -> None:
        await self.tg.deliver(callback_update(data, self.message_id, user=who, chat=GROUP))
        await self.tg.settle()


def values(tg) -> list[dict]:
    return [c.response.values for c in tg.runner.calls if c.response is not None]


async def test_a_tap_on_the_step_someone_else_shows_does_not_fill_my_other_step(bench):
    tg = await bench(ScriptedRunner(script), answer_policy="anyone")
    await tg.deliver(mention_update("deploy", ALICE))
    form = SharedMessage(tg)
    await form.tap_data(form.first, ALICE)  # 📝 Fill in
    await form.tap("eu", ALICE)  # Alice: Region eu, now on Environment
    assert "2/2 · Environment" in form.shown()[0]
    await form.tap_data(form.first, BOB)  # Bob opens the form too: the message shows his Region
    text, buttons = form.shown()
    assert "1/2 · Region" in text and list(buttons)[:2] == ["eu", "us"]

    said = await form.tap("us", ALICE)  # Alice taps "us" on the Region step Bob's form shows
    assert said == "That showed someone else's form: your tap changed nothing. Your own form is shown now."
    text, buttons = form.shown()  # her own form: Environment, which her tap did not fill
    assert "2/2 · Environment" in text and "→" not in text and "✓ production" not in buttons
    await form.tap("staging", ALICE)
    await form.tap("✅ Submit", ALICE)
    assert values(tg) == [{"region": "eu", "environment": "staging"}]


async def test_a_submit_on_someone_elses_summary_does_not_send_mine(bench):
    tg = await bench(ScriptedRunner(script), answer_policy="anyone")
    await tg.deliver(mention_update("deploy", ALICE))
    form = SharedMessage(tg)
    for who, region, environment in ((ALICE, "eu", "staging"), (BOB, "us", "production")):
        await form.tap_data(form.first, who)
        await form.tap(region, who)
        await form.tap(environment, who)
    text, _ = form.shown()
    assert "Region: us" in text and "Environment: production" in text  # Bob's summary
    said = await form.tap("✅ Submit", ALICE)  # Alice's values are not the ones she sees
    assert said is not None and "someone else's form" in said and values(tg) == []
    text, _ = form.shown()
    assert "Region: eu" in text and "Environment: staging" in text  # her summary: now she can submit
    await form.tap("✅ Submit", ALICE)
    assert values(tg) == [{"region": "eu", "environment": "staging"}]


async def test_a_second_tap_on_a_step_already_left_does_not_fill_the_next_step(bench):
    tg = await bench(ScriptedRunner(script))
    await tg.deliver(mention_update("deploy", ALICE))
    form = SharedMessage(tg)
    await form.tap_data(form.first, ALICE)
    us = form.shown()[1]["us"]
    # "us" tapped twice on the Region step (the second tap left before the message changed)
    await form.tap_data(us, ALICE)
    await form.tap_data(us, ALICE)
    said = tg.api.of("answerCallbackQuery")[-1].params.get("text")
    assert said == (
        "That button belongs to a step your form has left: nothing was changed. Use the buttons it shows now."
    )
    text, buttons = form.shown()
    assert "2/2 · Environment" in text and "→" not in text and not any(b.startswith("✓") for b in buttons)
    await form.tap("staging", ALICE)
    await form.tap("✅ Submit", ALICE)
    assert values(tg) == [{"region": "us", "environment": "staging"}]


RISK = HumanInputRequest(
    request_id="clarification:risk-g",
    tool_call_id="risk-g",
    clarification_type="risk_confirmation",
    question="Drop the production table?",
    input_mode="choice_with_other",
    options=[
        Option(id="option-1", label="Drop it", value="Drop it"),
        Option(id="option-2", label="Keep it", value="Keep it"),
    ],
)


async def test_someone_elses_go_ahead_pick_is_not_confirmed_by_my_one_tap(bench):
    tg = await bench(ScriptedRunner(ask_then_echo(RISK)), answer_policy="anyone")
    await tg.deliver(mention_update("deploy and clean up", ALICE))
    question = SharedMessage(tg)
    await question.tap("⚠️ Drop it", ALICE)  # Alice's first step
    said = await question.tap("⚠️ Yes: Drop it", BOB)  # Bob: one tap
    assert said == "Only the person who picked “Drop it” can confirm it: your tap answered nothing."
    assert [c.response for c in tg.runner.calls if c.response is not None] == []
    assert "⚠️ Yes: Drop it" in question.shown()[1]  # Alice's second step is still there
    await question.tap("⚠️ Yes: Drop it", ALICE)
    assert [c.response.option_id for c in tg.runner.calls if c.response is not None] == ["option-1"]
    assert "✅ Answered by Alice: Drop it" in question.shown()[0]


@pytest.mark.parametrize("shown_again", [["staging", "✏️ Edit"], ["◀ Back"]], ids=["edit", "back"])
async def test_a_tap_drawn_before_the_step_was_shown_again_fills_nothing(bench, shown_again):
    """A tap on the Region step sent with another one and delivered once the form shows Region
    again (Edit from the summary, Back): a choice made on the earlier drawing of the step, not on
    the one shown now, which still shows what the person chose. It changes nothing and says so."""
    tg = await bench(ScriptedRunner(script))
    await tg.deliver(mention_update("deploy", ALICE))
    form = SharedMessage(tg)
    await form.tap_data(form.first, ALICE)
    late_us = form.shown()[1]["us"]  # tapped right after "eu", delivered after everything below
    await form.tap("eu", ALICE)
    for label in shown_again:
        await form.tap(label, ALICE)
    assert "1/2 · Region" in form.shown()[0] and "→ eu" in form.shown()[0]

    await form.tap_data(late_us, ALICE)
    assert tg.api.of("answerCallbackQuery")[-1].params.get("text") == catalog.text("wizard_step_gone")
    text, _ = form.shown()
    assert "1/2 · Region" in text and "→ eu" in text
    await form.tap("Next ▶", ALICE)
    await form.tap(next(label for label in form.shown()[1] if label.endswith("staging")), ALICE)
    await form.tap("✅ Submit", ALICE)
    assert values(tg) == [{"region": "eu", "environment": "staging"}]
