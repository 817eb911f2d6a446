"""Text typed in a Feishu card's "Other…" input that names an option (its label, case aside) is that
option: a graph's own ``interrupt()`` is resumed with the option's value, not the text; a risk
confirmation's go-ahead option (its "Other…" submit from a stale or forged card: the card shows
none) gets a toast with the line asking for "confirm", the card stays as it is, and "confirm"
submitted there answers with it. Real lark-oapi against the fake open API, the real core."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner
from tests.agent import user_graphs
from tests.gateway.flow.test_typed_confirm import ASK, DELETE, LAYOUTS, asks, risk

from .cards import button, payload
from .events import card_action
from .test_scenarios import ask


async def submit_other(bot: Any, message_id: str, value: dict[str, Any], text: str) -> dict[str, Any]:
    """Submit ``text`` in the "Other…" input of the card ``message_id`` (``value``: its Submit's)."""
    click = card_action({**value, "a": "otx"}, form_value={"other_text": text}, message_id=message_id)
    return await bot.click(click)


@pytest.mark.parametrize("text", ["Staging", "STAGING"])
async def test_an_options_label_in_other_resumes_the_graph_with_its_value(
    make_bot: Any, environments: Any, text: str
) -> None:
    bot = await make_bot(environments)
    message_id, card = await ask(bot, "deploy it")
    opened = await bot.click(card_action(payload(button(card, "Other…")), message_id=message_id))
    submit = payload(button(opened["card"]["data"], "Submit"))
    done = await submit_other(bot, message_id, submit, text)
    assert done["toast"]["type"] == "success"
    await bot.gateway.drain()
    [answer] = user_graphs.ANSWERS
    assert (answer["response_kind"], answer["option_id"], answer["value"]) == (
        "option",
        "option-2",
        "stage-2",
    )


async def test_a_go_ahead_option_in_other_is_toasted_the_confirm_line(make_bot: Any) -> None:
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    bot = await make_bot(runner)
    message_id, card = await ask(bot, "clean up the test data")
    value = payload(button(card, DELETE))  # the card's token; "Other…" is not on a risk card

    refused = await submit_other(bot, message_id, value, DELETE)
    assert refused["toast"]["content"] == ASK and "card" not in refused
    await bot.gateway.drain()
    assert len(runner.calls) == 1  # nothing reached the agent

    done = await submit_other(bot, message_id, value, "confirm")
    assert done["toast"]["type"] == "success"
    await bot.gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == [DELETE]
