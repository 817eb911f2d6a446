"""Whole conversations: signed events in, cards out through the real lark-oapi client, the real core."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, echo, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, Option

from .cards import button, components, is_interactive, payload, text_of
from .events import card_action, message_event

FIELDS = [
    FormField(name="count", label="Replicas", type="number", required=True),
    FormField(name="init_git", label="Init git", type="checkbox"),
    FormField(
        name="langs",
        label="Languages",
        type="multi_select",
        options=[
            Option(id=f"langs-option-{i}", label=x, value=x) for i, x in enumerate(["Py", "Go", "Rust"], 1)
        ],
    ),
    FormField(name="deadline", label="Deadline", type="date"),
]


def risk_request() -> HumanInputRequest:
    """A risk confirmation: option-1 confirms."""
    return HumanInputRequest(
        request_id="clarification:risk-1",
        tool_call_id="risk-1",
        clarification_type="risk_confirmation",
        question="Drop the production table?",
        input_mode="choice_with_other",
        options=[
            Option(id="option-1", label="Drop it", value="Drop it"),
            Option(id="option-2", label="Keep it", value="Keep it"),
        ],
    )


def agent(turn: Turn) -> TurnOutput:
    """Asks by keyword, then says what the answer was."""
    if turn.response is not None:
        values = turn.response.values
        return TurnOutput(replies=[f"Going with {values if values is not None else turn.response.value}."])
    if "deploy" in turn.text:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    if "configure" in turn.text:
        return asking(form_request("Settings?", FIELDS))
    if "drop" in turn.text:
        return asking(risk_request())
    return echo(turn)


async def ask(bot, text: str = "deploy the app", **event) -> tuple[str, dict]:
    """Send ``text`` and wait for the question card; returns its message id and card."""
    response = await bot.deliver(message_event(text, **event))
    assert response.status_code == 200 and response.json() == {"msg": "success"}
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]
    assert is_interactive(card), text_of(card)
    return message_id, card


async def test_p2p_click_answers_with_toast_and_updated_card_then_next_turn(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    assert "Which framework?" in text_of(card)
    assert [b["text"]["content"] for b in components(card, "button")] == ["React", "Vue", "Other…", "Cancel"]
    assert payload(button(card, "Vue"))["a"] == "o2"  # a position, never the option text

    reply = await bot.click(card_action(payload(button(card, "Vue")), message_id=message_id))
    assert reply["toast"]["type"] == "success"
    updated = reply["card"]["data"]
    assert reply["card"]["type"] == "raw" and not is_interactive(updated)
    assert "✅ Answered by <at id=ou_alice></at>: Vue" in text_of(updated)

    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.option_id == "option-2"
    assert "Going with Vue." in text_of(bot.api.shown()[-1])
    token = bot.api.calls[-1].headers["authorization"]
    assert token == "Bearer t-fake-tenant-token"


async def test_second_click_expired_and_wrong_user_get_a_toast_and_change_nothing(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    vue = payload(button(card, "Vue"))

    stranger = await bot.click(card_action(vue, user="ou_mallory", message_id=message_id))
    assert "card" not in stranger and "Only ou_alice can answer" in stranger["toast"]["content"]

    assert "card" in await bot.click(card_action(vue, message_id=message_id))
    again = await bot.click(card_action(payload(button(card, "React")), message_id=message_id))
    assert "card" not in again and again["toast"]["content"] == "You already answered this question."

    expired = await bot.click(card_action({"t": "no-such-token", "a": "o1"}, message_id=message_id))
    assert "card" not in expired and "expired" in expired["toast"]["content"]
    await bot.gateway.drain()
    assert [c.response.option_id for c in bot.runner.calls if c.response] == ["option-2"]


async def test_form_invalid_submit_keeps_form_then_typed_values_arrive(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot, "configure the service")
    form = components(card, "form")[0]
    assert [c["tag"] for c in components(form, "checker") + components(form, "date_picker")] == [
        "checker",
        "date_picker",
    ]
    assert "**Replicas** (required)" in text_of(card)
    submit = payload(button(card, "Submit"))

    bad = await bot.click(
        card_action(submit, tag="button", form_value={"f1": "many", "f3": ["o1"]}, message_id=message_id)
    )
    assert bad["toast"]["type"] == "error" and "Replicas" in bad["toast"]["content"] and "card" not in bad

    good = {"f1": "3", "f2": True, "f3": ["o1", "o3"], "f4": "2026-12-01 +0800"}
    ok = await bot.click(card_action(submit, tag="button", form_value=good, message_id=message_id))
    assert ok["toast"]["type"] == "success" and not is_interactive(ok["card"]["data"])
    await bot.gateway.drain()
    values = bot.runner.calls[-1].response.values
    assert values == {"count": 3, "init_git": True, "langs": ["Py", "Rust"], "deadline": "2026-12-01"}


async def test_other_opens_an_input_and_its_text_answers(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)

    opened = await bot.click(card_action(payload(button(card, "Other…")), message_id=message_id))
    other_card = opened["card"]["data"]
    assert components(other_card, "input") and "toast" not in opened
    submit = payload(button(other_card, "Submit"))
    answer = "Svelte <at id=all></at>"
    done = await bot.click(card_action(submit, form_value={"other_text": answer}, message_id=message_id))
    shown = text_of(done["card"]["data"])
    assert (
        "✅ Answered by <at id=ou_alice></at>: Svelte &#60;at id=all>" in shown and "<at id=all>" not in shown
    )
    await bot.gateway.drain()
    response = bot.runner.calls[-1].response
    assert (response.response_kind, response.value) == ("text", answer)


async def test_risk_confirmation_confirms_behind_a_dialog(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot, "drop the table")
    confirm, cancel = button(card, "Drop it"), button(card, "Keep it")
    assert confirm["type"] == "danger" and "confirm" in confirm  # goes ahead: red, asks first
    assert cancel["type"] == "default" and "confirm" not in cancel  # the safe choice
    assert not any(b["text"]["content"] == "Other…" for b in components(card, "button"))

    await bot.click(card_action(payload(confirm), message_id=message_id))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.option_id == "option-1"


async def test_typed_reply_answers_and_the_card_is_closed(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, _ = await ask(bot)

    await bot.deliver(message_event("2"))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.option_id == "option-2"
    closed = bot.api.cards[message_id]
    assert not is_interactive(closed) and "Answered by <at id=ou_alice></at>: Vue" in text_of(closed)


async def test_redelivered_event_runs_once(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    event = message_event("hello", event_id="ev-same")
    for _ in range(3):
        assert (await bot.deliver(event)).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["hello"]
    assert len([c for c in bot.api.shown() if "You said: hello" in text_of(c)]) == 1


async def test_group_mention_replies_in_its_thread_and_the_thread_continues(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await ask(bot, "deploy it", chat="oc_group", chat_type="group", message_id="om_root", mention_bot=True)
    replies = [c for c in bot.api.posted() if c.path.endswith("/reply")]
    assert replies and all(c.path == "/open-apis/im/v1/messages/om_root/reply" for c in replies)
    assert all(c.body["reply_in_thread"] is True for c in replies)

    await bot.deliver(message_event("hello again", chat="oc_group", chat_type="group", root_id="om_root"))
    await bot.gateway.drain()
    threads = {c.thread_id for c in bot.runner.calls}
    assert len(threads) == 1 and bot.runner.calls[0].text == "deploy it"


async def test_group_chatter_without_a_mention_is_ignored(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("lunch?", chat="oc_group", chat_type="group"))
    await bot.deliver(message_event("in a thread", chat="oc_group", chat_type="group", root_id="om_other"))
    await bot.gateway.drain()
    assert bot.runner.calls == [] and bot.api.posted() == []


async def test_a_redelivered_click_repeats_the_answered_card_and_runs_once(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    message_id, card = await ask(bot)
    click = card_action(payload(button(card, "React")), message_id=message_id, event_id="ev-click-1")

    first = await bot.click(click)
    again = await bot.click(click)  # Feishu retries when it did not get the first reply in time
    assert again["card"] == first["card"] and "Answered by <at id=ou_alice></at>: React" in text_of(
        again["card"]["data"]
    )
    await bot.gateway.drain()
    assert [c.response.option_id for c in bot.runner.calls if c.response] == ["option-1"]
