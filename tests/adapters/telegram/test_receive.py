"""Webhook checks, dedupe, and which chats and messages reach the agent (and on which thread)."""

from __future__ import annotations

import pytest

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import test_config as gateway_config

from .harness import ALICE, BOB, GROUP, bot_message, mention_update, message_update, telegram_settings


async def test_wrong_or_missing_secret_is_403_and_nothing_runs(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    assert (await tg.post(message_update("hi"), secret="wrong")).status_code == 403
    assert (await tg.post(message_update("hi"), secret=None)).status_code == 403
    await tg.gateway.drain()
    assert runner.calls == [] and tg.api.of("sendMessage") == []


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"message": {"text": "no update id"}}',
        b'{"update_id": 7, "message": "text"}',
        # an invoice's total_amount is an integer of the currency's smallest unit
        b'{"update_id": 7, "message": {"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"},'
        b' "invoice": {"title": "Pro", "description": "", "start_parameter": "p", "currency": "USD",'
        b' "total_amount": "14.50"}}}',
    ],
)
async def test_malformed_update_is_400(bench, body):
    runner = ScriptedRunner()
    tg = await bench(runner)
    response = await tg.post(body)
    assert response.status_code == 400
    assert runner.calls == []


async def test_duplicate_update_runs_once(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    update = message_update("hello")
    await tg.deliver(update)
    await tg.deliver(update)  # Telegram redelivers when it did not see our 200
    assert [c.text for c in runner.calls] == ["hello"]
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["You said: hello"]


def asks_environment(turn: Turn) -> TurnOutput:
    """Asks where to deploy (any typed text answers) on "deploy the docs"; else the echo reply."""
    if turn.response is None and turn.text == "deploy the docs":
        return asking(text_request("Which environment should I deploy to?"))
    return ScriptedRunner().script(turn)


async def test_a_redelivered_message_sent_before_the_question_is_no_answer_to_it(bench):
    """An update Telegram delivers late (its webhook call failed, or it waited for the poller): a
    message sent while the agent was still thinking is more context, never the answer to the
    question asked meanwhile (README). ``date`` is in whole seconds: an answer sent in the very
    second the question was asked still answers it."""
    runner = ScriptedRunner(asks_environment)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the docs"))
    question = tg.api.of("sendMessage")[-1]
    asked = await tg.gateway.store.pending_for_thread(runner.calls[0].thread_id)
    assert asked is not None and "Which environment" in question.params["text"]
    shown = (ALICE["id"], question.result["message_id"])

    await tg.deliver(message_update("also include the changelog", date=int(asked.created_at) - 5))
    assert (runner.calls[-1].text, runner.calls[-1].response) == ("also include the changelog", None)
    assert "Answered by" not in (tg.api.shown(*shown) or "")  # the question stays open

    await tg.deliver(message_update("staging", date=int(asked.created_at)))  # the second it was asked
    answer = runner.calls[-1].response
    assert answer is not None and answer.value == "staging"
    assert "✅ Answered by Alice: staging" in (tg.api.shown(*shown) or "")


async def test_private_chat_is_one_thread(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("one"))
    await tg.deliver(message_update("two"))
    await tg.deliver(message_update("three", user=BOB))
    alice_1, alice_2, bob = (c.thread_id for c in runner.calls)
    assert alice_1 == alice_2 != bob
    reply = tg.api.of("sendMessage")[0]
    assert reply.params["chat_id"] == str(ALICE["id"]) and "reply_parameters" not in reply.params


async def test_group_mention_starts_a_chain_and_replies_to_the_bot_continue_it(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)

    await tg.deliver(message_update("just chatting", chat=GROUP))  # not for the bot
    assert runner.calls == []

    first = mention_update("summarize the logs")
    await tg.deliver(first)
    assert runner.calls[-1].text == "summarize the logs"  # the @mention is not part of the request
    answer = tg.api.of("sendMessage")[-1]
    assert answer.params["chat_id"] == str(GROUP["id"])
    assert f'"message_id": {first["message"]["message_id"]}' in answer.params["reply_parameters"]

    await tg.deliver(
        message_update("and the errors?", user=BOB, chat=GROUP, reply_to=bot_message(1000, GROUP))
    )
    await tg.deliver(mention_update("something else"))
    chain, reply, other = (c.thread_id for c in runner.calls)
    assert chain == reply != other


async def test_forum_topic_is_its_own_thread_and_the_bot_answers_only_where_addressed(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy", thread_id=77))
    # a bot that sees every message (privacy off, or an admin) still keeps out of talk not meant for it
    await tg.deliver(message_update("lunch anyone?", chat=GROUP, thread_id=77))
    await tg.deliver(message_update("unrelated", chat=GROUP, thread_id=78))
    answer = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    await tg.deliver(message_update("also the docs", chat=GROUP, thread_id=77, reply_to=answer))
    assert [c.text for c in runner.calls] == ["deploy", "also the docs"]
    assert runner.calls[0].thread_id == runner.calls[1].thread_id
    assert {c.params["message_thread_id"] for c in tg.api.of("sendMessage")} == {"77"}
    assert {c.params["message_thread_id"] for c in tg.api.of("sendChatAction")} == {"77"}


async def test_bad_token_fails_start_with_a_clear_error(bot_api):
    gateway = Gateway(gateway_config(), MemoryStore("t-bad-token"), ScriptedRunner())
    adapter = TelegramAdapter(telegram_settings(bot_api, bot_token="999:wrong"), gateway)
    with pytest.raises(RuntimeError, match="TELEGRAM_BOT_TOKEN"):
        await adapter.start()
    assert await adapter.check() == ["TELEGRAM_BOT_TOKEN is rejected by Telegram (getMe)"]
    await adapter.stop()


async def test_webhook_mode_needs_a_secret_and_sets_the_webhook(bot_api):
    gateway = Gateway(gateway_config(), MemoryStore("t-webhook"), ScriptedRunner())
    unsafe = TelegramAdapter(telegram_settings(bot_api, webhook_secret=None), gateway)
    with pytest.raises(
        RuntimeError, match=r"webhook_url \(TELEGRAM_WEBHOOK_URL\) is set without TELEGRAM_WEBHOOK_SECRET"
    ):
        await unsafe.start()
    with pytest.raises(ValueError, match="TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z"):
        telegram_settings(bot_api, webhook_secret="has spaces!")  # the settings refuse it (exit 2)
    adapter = TelegramAdapter(telegram_settings(bot_api), gateway)
    await adapter.start()
    assert not bot_api.of("setWebhook")  # a worker process starts its adapters this far only
    await adapter.start_receiving()
    await adapter.stop()
    hook = bot_api.of("setWebhook")[-1].params
    assert (
        hook["url"] == "https://bot.example.com/telegram/webhook" and hook["secret_token"] == "hook-secret_1"
    )


async def test_the_mention_is_removed_in_any_letter_case_and_only_the_bots(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    update = mention_update("ask @clari_botany about\nthe logs")
    update["message"]["text"] = update["message"]["text"].replace("@clari_bot ", "@Clari_Bot ", 1)
    await tg.deliver(update)
    assert runner.calls[-1].text == "ask @clari_botany about\nthe logs"
    # Chinese is written without a space after the mention; the username still ends there.
    chinese = mention_update("x")
    handle = "@clari_bot"
    chinese["message"]["text"] = f"{handle}帮我部署文档"
    await tg.deliver(chinese)
    assert runner.calls[-1].text == "帮我部署文档"
