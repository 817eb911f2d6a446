"""The whole way: Telegram updates in, the real LangGraph agent (scripted model) in between."""

from __future__ import annotations

import yaml

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .harness import callback_update, message_update, open_bench


async def test_private_message_question_tap_and_the_agents_next_turn(bot_api, tmp_path):
    script = tmp_path / "script.yaml"
    turns = [
        {
            "content": "",
            "tool_calls": [
                {
                    "name": "ask_clarification",
                    "args": {
                        "question": "Which region should I deploy to?",
                        "clarification_type": "approach_choice",
                        "options": ["eu-west", "us-east"],
                    },
                }
            ],
        },
        {"content": "Deploying to **us-east** now."},
    ]
    script.write_text(yaml.safe_dump(turns))
    runner = LangGraphRunner(AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://"))
    store = MemoryStore("e2e-telegram")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(message_update("deploy the api"))
        asked = next(c for c in bot_api.of("sendMessage") if c.markup)
        assert "Which region should I deploy to?" in asked.params["text"]
        buttons = [b for row in asked.buttons for b in row]
        assert [b["text"] for b in buttons] == ["eu-west", "us-east", "Other…", "✖ Cancel"]

        await tg.deliver(callback_update(buttons[1]["callback_data"], 1000))
        assert "✅ Answered by Alice: us-east" in bot_api.of("editMessageText")[-1].params["text"]
        assert bot_api.of("sendMessage")[-1].params["text"] == "Deploying to <b>us-east</b> now."
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
