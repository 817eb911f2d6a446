"""A reply typed after tapping "Other…" is the "Other…" answer, as text typed in Slack's or Feishu's
box is: "2" written for "How many replicas?" reaches the agent as the text "2", not as option 2;
only an option's exact label (case aside) is still that option. Before, the reply was read as any
typed answer is, so "2" picked the second option. Real PTB, fake Bot API, the real core."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, bot_message, callback_update, message_update, private_chat
from .test_choices import ask_then_echo, clarification_call

REPLICAS = choice_request("How many replicas?", ["One", "Three"])
PROMPT_ID = 1001  # the fake server numbers the bot's messages from 1000: the question, then the prompt


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("2", ("text", None, "2")),  # chose "Other…" to write a number: not option 2
        ("2.", ("text", None, "2.")),
        ("three!", ("text", None, "three!")),
        ("THREE", ("option", "option-2", "Three")),  # the option's very label is still the option
    ],
)
async def test_the_reply_after_other_is_the_free_answer(bench, typed: str, answer: tuple) -> None:
    runner = ScriptedRunner(ask_then_echo(REPLICAS))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the api"))
    other = clarification_call(tg).buttons[-1][0]
    assert other["text"] == "Other…"
    await tg.deliver(callback_update(other["callback_data"], 1000))

    await tg.deliver(message_update(typed, reply_to=bot_message(PROMPT_ID, private_chat(ALICE))))

    got = runner.calls[-1].response
    assert got is not None and (got.response_kind, got.option_id, got.value) == answer
    assert f"✅ Answered by Alice: {answer[2]}" in tg.api.of("editMessageText")[-1].params["text"]


async def test_without_other_a_typed_number_still_picks_the_option(bench) -> None:
    runner = ScriptedRunner(ask_then_echo(REPLICAS))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the api"))
    await tg.deliver(message_update("2"))
    got = runner.calls[-1].response
    assert got is not None and (got.response_kind, got.option_id) == ("option", "option-2")
