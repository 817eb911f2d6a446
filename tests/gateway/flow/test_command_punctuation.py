"""A command followed by sentence punctuation (``/cancel。``, ``/new！``, ``/help?``) is still the
command, on every platform (the shared parser): never a message to the agent."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.commands import Command, parse_command
from clarigate.gateway.store.base import Store

from .test_commands import FRAMEWORK


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/cancel。", Command("cancel")),
        ("/cancel.", Command("cancel")),
        ("/new！", Command("new")),
        ("/New!", Command("new")),
        ("／取消", Command("cancel")),  # the catalog's Chinese name of /cancel
        ("/取消。", Command("cancel")),
        ("/帮助？", Command("help")),
        ("/取消订单", None),  # a longer word: no such command
        ("/help?", Command("help")),
        ("/status？", Command("status")),
        ("/cancel…", Command("cancel")),
        ("/cancel. please", Command("cancel", "please")),
        ("/cancel@clarigate_bot.", Command("cancel")),
        ("/newer.", None),
        ("/.", None),
        ("/。", None),
    ],
)
def test_trailing_sentence_punctuation_is_not_part_of_the_name(text: str, expected: Command | None):
    assert parse_command(text) == expected


def asks(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text.startswith("build"):
        return asking(FRAMEWORK)
    return TurnOutput(replies=[f"ran with: {turn.response.value if turn.response else turn.text}"])


async def test_cancel_with_a_full_stop_dismisses_the_question(store: Store, make_gateway):
    runner = ScriptedRunner(asks)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build the shop")
    await gateway.drain()

    await chat.say("/cancel。")
    await gateway.drain()
    assert all(c.text != "/cancel。" for c in runner.calls)  # never the agent's
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view is not None and view.status != "pending"
