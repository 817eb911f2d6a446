"""A risk confirmation asked as a one-field form, answered by typing on Telegram (no wizard
opened): "yes" to its checkbox, or its select's go-ahead option by number, asks for "confirm"
before it counts; nothing reaches the agent until then. Real PTB, fake Bot API."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from .harness import message_update

FIELDS = {
    "checkbox": ({"name": "confirm_delete", "type": "checkbox", "required": True}, "yes"),
    "select": ({"name": "action", "type": "select", "options": ["Delete all rows", "Keep them"]}, "1"),
}
ASKED = {"checkbox": "Confirm delete: yes", "select": "Action: Delete all rows"}
VALUES = {"checkbox": {"confirm_delete": True}, "select": {"action": "Delete all rows"}}


def risky(field: dict[str, Any]):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        args = {"question": "Delete the 3 prod tables?", "clarification_type": "risk_confirmation"}
        return asking(normalize_request({**args, "fields": [field]}, "call-wipe"))

    return script


@pytest.mark.parametrize("kind", FIELDS)
async def test_a_typed_go_ahead_answer_to_a_risk_form_asks_for_confirm(bench, kind: str):
    field, typed = FIELDS[kind]
    runner = ScriptedRunner(risky(field))
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    await tg.deliver(message_update(typed))
    assert len(runner.calls) == 1  # not answered, not run as a request
    said = tg.api.of("sendMessage")[-1].params["text"]
    assert said.startswith(f"Reply “confirm” to go ahead with “{ASKED[kind]}”"), said
    await tg.deliver(message_update("confirm"))
    assert [c.response.values for c in runner.calls if c.response] == [VALUES[kind]]
