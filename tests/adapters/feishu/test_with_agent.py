"""The real LangGraph agent (scripted model) behind Feishu: ask with a card, click, next turn."""

from __future__ import annotations

import json

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .cards import button, payload, text_of
from .events import card_action, message_event

SCRIPT = [
    {
        "content": "",
        "tool_calls": [
            {
                "name": "ask_clarification",
                "args": {
                    "question": "Which database?",
                    "clarification_type": "approach_choice",
                    "options": ["Postgres", "SQLite"],
                },
            }
        ],
    },
    {"content": "Noted: {last_user}"},
]


async def test_the_agent_asks_on_a_card_and_its_next_turn_gets_the_click(make_bot, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    runner = LangGraphRunner(AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://"))
    bot = await make_bot(runner)
    try:
        await bot.deliver(message_event("set up storage"))
        await bot.gateway.drain()
        message_id, card = list(bot.api.cards.items())[-1]
        assert "Which database?" in text_of(card)

        reply = await bot.click(card_action(payload(button(card, "SQLite")), message_id=message_id))
        assert "✅ Answered by <at id=ou_alice></at>: SQLite" in text_of(reply["card"]["data"])
        await bot.gateway.drain()
        last = text_of(bot.api.shown()[-1])
        assert last.startswith("Noted:") and "Which database?" in last and "SQLite" in last
    finally:
        await runner.aclose()
