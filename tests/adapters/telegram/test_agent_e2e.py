"""The whole way: Telegram updates in, the real LangGraph agent (scripted model) in between."""

from __future__ import annotations

import yaml

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from .harness import BOB, GROUP, bot_message, callback_update, mention_update, message_update, open_bench


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


async def test_in_a_forum_topic_the_agent_tells_alices_request_from_bobs_answer(bot_api, tmp_path):
    script = tmp_path / "script.yaml"
    ask = {"name": "ask_clarification", "args": {"question": "Which region?", "options": ["eu", "us"]}}
    replies = [{"content": "Logs look fine."}, {"content": "Deploying to us."}]
    turns = [{"content": "", "tool_calls": [ask]}, *replies]
    script.write_text(yaml.safe_dump(turns))
    runner = LangGraphRunner(AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://"))
    store = MemoryStore("e2e-telegram-topic")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(mention_update("deploy the api", BOB, thread_id=77))
        asked = next(c for c in bot_api.of("sendMessage") if c.markup)
        await tg.deliver(mention_update("how do the logs look?", thread_id=77))  # Alice
        assert bot_api.of("sendMessage")[-1].params["text"] == "Logs look fine."
        question = bot_message(asked.result["message_id"], GROUP)
        await tg.deliver(message_update("2", BOB, GROUP, reply_to=question, thread_id=77))
        assert bot_api.of("sendMessage")[-1].params["text"] == "Deploying to us."

        thread_id = await store.thread_of_chat(f"telegram::{GROUP['id']}:77")
        history = await runner._agent.history(thread_id)
        humans = [m for m in history if m.type == "human"]
        assert [m.additional_kwargs.get("human_input_response") is not None for m in humans] == [
            False,
            False,
            True,
        ]
        alices, bobs = humans[1], humans[2]
        assert alices.content.startswith("[From Alice, another person in this conversation.")
        assert alices.content.endswith("how do the logs look?")
        assert bobs.content == 'For your clarification "Which region?", my answer is: us'
        assert bobs.additional_kwargs["human_input_response"]["value"] == "us"
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
