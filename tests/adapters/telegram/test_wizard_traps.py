"""A form's wizard never traps the person: its message deleted, options beyond a keyboard, "3,5"."""

from __future__ import annotations

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest

from clarigate.adapters.telegram.render import render_question
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, Option

from .harness import ALICE, bot_message, callback_update, message_update, private_chat

CHAT = ALICE["id"]


def opts(name: str, count: int) -> list[Option]:
    return [Option(id=f"{name}-{i}", label=f"{name} {i}", value=f"{name}-{i}") for i in range(1, count + 1)]


def deploy_form(regions: int = 3, kind: str = "select") -> HumanInputRequest:
    return form_request(
        "Deploy where?",
        [
            FormField(name="size", label="Size", type="number", required=True),
            FormField(
                name="region", label="Region", type=kind, required=True, options=opts("Region", regions)
            ),
            FormField(name="notes", label="Notes", type="text"),
        ],
        request_id="clarification:traps",
    )


def runner_for(form: HumanInputRequest) -> ScriptedRunner:
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "deploy":
            return asking(form)
        if turn.response is None:
            return TurnOutput(replies=[f"You said: {turn.text}"])
        return TurnOutput(replies=[f"Configured: {turn.response.values}"])

    return ScriptedRunner(script)


async def open_form(bench, form: HumanInputRequest):
    runner = runner_for(form)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    token = asked.buttons[0][0]["callback_data"].split("|")[0]
    message_id = max(m for (chat, m) in tg.api.messages if chat == CHAT)
    await tg.deliver(callback_update(f"{token}|form", message_id))
    return runner, tg, token, message_id


def button_count(call) -> int:
    return sum(len(row) for row in call.buttons)


async def test_deleted_wizard_message_is_posted_anew(bench):
    runner, tg, token, message_id = await open_form(bench, deploy_form())
    assert "1/3 · Size" in tg.api.shown(CHAT, message_id)
    tg.api.delete(CHAT, message_id)
    asked = len(runner.calls)

    await tg.deliver(message_update("3"))
    reposted = tg.api.of("sendMessage")[-1]
    assert "2/3 · Region" in reposted.params["text"]
    new_id = max(m for (chat, m) in tg.api.messages if chat == CHAT)
    assert new_id != message_id and "2/3 · Region" in tg.api.shown(CHAT, new_id)

    await tg.deliver(message_update("hello"))  # shown on the new message, not eaten silently
    assert "⚠️ Choose one of" in tg.api.shown(CHAT, new_id)

    # taps on the new message and replies to it go on with the form
    await tg.deliver(callback_update(f"{token}|s2", new_id))
    assert "3/3 · Notes" in tg.api.shown(CHAT, new_id)
    await tg.deliver(message_update("fast please", reply_to=bot_message(new_id, private_chat(ALICE))))
    assert "Please check your answers:" in tg.api.shown(CHAT, new_id)
    await tg.deliver(callback_update(f"{token}|S", new_id))
    assert runner.calls[-1].response.values == {"size": 3, "region": "Region-2", "notes": "fast please"}
    assert all(call.response is not None for call in runner.calls[asked:])


async def test_fake_api_refuses_edit_of_deleted_message(bot_api):
    async with Bot(bot_api.token, base_url=bot_api.base_url) as bot:
        sent = await bot.send_message(CHAT, "hi")
        bot_api.delete(CHAT, sent.message_id)
        with pytest.raises(BadRequest, match="(?i)^message to edit not found$"):
            await bot.edit_message_text("hello", chat_id=CHAT, message_id=sent.message_id)


@pytest.mark.parametrize("kind", ["select", "multi_select"])
async def test_many_options_leave_room_for_way_out_and_can_be_typed(bench, kind):
    _, tg, token, message_id = await open_form(bench, deploy_form(150, kind))
    await tg.deliver(message_update("3"))
    step = tg.api.of("editMessageText")[-1]
    assert step.result is not None and "2/3 · Region" in step.params["text"]
    assert button_count(step) <= 100
    labels = [b["text"] for row in step.buttons for b in row]
    assert "◀ Back" in labels and "✖ Cancel" in labels and ("Done ✔" in labels) == (kind != "select")
    assert "Region 150" not in labels and "type the one you want" in step.params["text"]
    await tg.deliver(message_update("Region 150"))  # a choice typed: taken, and on to the next step
    assert "3/3 · Notes" in tg.api.shown(CHAT, message_id)
    await tg.deliver(callback_update(f"{token}|k", message_id))
    assert "Region: Region 150" in tg.api.shown(CHAT, message_id)


async def test_fake_api_refuses_keyboard_over_100_buttons(bot_api):
    rows = [[InlineKeyboardButton(str(i), callback_data=str(i))] for i in range(101)]
    async with Bot(bot_api.token, base_url=bot_api.base_url) as bot:
        with pytest.raises(BadRequest, match="(?i)^reply markup is too long$"):
            await bot.send_message(CHAT, "hi", reply_markup=InlineKeyboardMarkup(rows))
        sent = await bot.send_message(CHAT, "hi", reply_markup=InlineKeyboardMarkup(rows[:100]))
        with pytest.raises(BadRequest, match="(?i)^reply markup is too long$"):
            await bot.edit_message_text(
                "ho", chat_id=CHAT, message_id=sent.message_id, reply_markup=InlineKeyboardMarkup(rows)
            )


async def test_decimal_comma_refusal_says_dot(bench):
    runner, tg, _, message_id = await open_form(bench, deploy_form())
    await tg.deliver(message_update("3,5"))
    shown = tg.api.shown(CHAT, message_id)
    assert "1/3 · Size" in shown and "⚠️ Enter a number" in shown and "3.5" in shown
    assert runner.calls[-1].text == "deploy"  # not guessed, not sent on


def test_many_choices_leave_room_for_other_and_cancel():
    request = choice_request("Which region?", [f"Region {i}" for i in range(1, 151)])
    assert request.input_mode == "choice_with_other"
    keyboard = render_question(request, "tok").reply_markup
    assert isinstance(keyboard, InlineKeyboardMarkup)
    labels = [b.text for row in keyboard.inline_keyboard for b in row]
    assert len(labels) <= 100 and labels[-2:] == ["Other…", "✖ Cancel"]
