"""Bot API errors as the core's DeliveryFailed, and groups upgraded to supergroups."""

from __future__ import annotations

import logging

import pytest
from prometheus_client.parser import text_string_to_metric_families

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.runtime.ops import exposition

from .harness import ALICE, GROUP, bot_message, callback_update, mention_update, message_update
from .test_choices import ask_then_echo

OLD_GROUP = {"id": -4455, "type": "group", "title": "Team"}
SUPERGROUP = {"id": -1004455, "type": "supergroup", "title": "Team"}
MENTION = [{"type": "mention", "offset": 0, "length": 10}]


def private(user_id: int = ALICE["id"]) -> Conversation:
    return Conversation(platform="telegram", chat_id=str(user_id), is_direct=True)


@pytest.mark.parametrize(
    ("status", "description", "permanent", "code"),
    [
        (403, "Forbidden: bot was blocked by the user", True, "403"),
        (403, "Forbidden: bot was kicked from the group chat", True, "403"),
        (400, "Bad Request: chat not found", True, "400"),
        (500, "Internal Server Error", False, "network"),
    ],
)
async def test_send_raises_delivery_failed_classified(bench, status, description, permanent, code):
    tg = await bench()
    tg.api.fail_next("sendMessage", status, times=6, description=description)
    with pytest.raises(DeliveryFailed) as failed:
        await tg.adapter.send(private(), TextReply(text="hello"))
    assert (failed.value.permanent, failed.value.code) == (permanent, code)
    # one attempt per send, whatever the error: the core's delivery decides whether to try again
    assert len(tg.api.of("sendMessage")) == 1


async def test_a_long_flood_wait_is_transient_with_telegrams_wait(bench):
    tg = await bench()
    tg.api.fail_next("sendMessage", 429, retry_after=600)
    with pytest.raises(DeliveryFailed) as failed:
        await tg.adapter.send(private(), TextReply(text="hello"))
    assert not failed.value.permanent and failed.value.retry_after == 600 and failed.value.code == "429"


async def test_an_upgraded_group_keeps_its_conversation_and_open_question(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("@clari_bot deploy", chat=OLD_GROUP, entities=MENTION))
    asked = tg.api.of("sendMessage")[-1]
    # the group is upgraded: Telegram says so in both chats; calls to the old id now fail
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
    await tg.deliver(message_update(None, chat=OLD_GROUP, migrate_to_chat_id=SUPERGROUP["id"]))
    await tg.deliver(message_update(None, chat=SUPERGROUP, migrate_from_chat_id=OLD_GROUP["id"]))
    # "Other…" tapped on the question left in the group: its prompt comes in the supergroup (a reply
    # there quotes a message of the supergroup only), and the answer typed in reply to it answers
    other = next(b["callback_data"] for row in asked.buttons for b in row if b["text"] == "Other…")
    await tg.deliver(callback_update(other, asked.result["message_id"], ALICE, OLD_GROUP))
    prompt = tg.api.of("sendMessage")[-1]
    assert prompt.params["chat_id"] == str(SUPERGROUP["id"])
    prompt_id = prompt.result["message_id"]
    await tg.deliver(message_update("Svelte", chat=SUPERGROUP, reply_to=bot_message(prompt_id, SUPERGROUP)))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Svelte"
    assert runner.calls[0].thread_id == runner.calls[-1].thread_id
    assert tg.api.of("sendMessage")[-1].params["chat_id"] == str(SUPERGROUP["id"])


async def test_a_send_to_an_upgraded_group_goes_to_the_supergroup(bench):
    tg = await bench()
    tg.api.migrate(OLD_GROUP["id"], SUPERGROUP["id"])
    group = Conversation(platform="telegram", chat_id=str(OLD_GROUP["id"]), topic="msg-1", reply_to="1")
    await tg.adapter.send(group, TextReply(text="first"))
    await tg.adapter.send(group, TextReply(text="second"))
    sent = [(c.params["chat_id"], c.params["text"]) for c in tg.api.of("sendMessage")]
    new = str(SUPERGROUP["id"])
    assert sent == [(str(OLD_GROUP["id"]), "first"), (new, "first"), (new, "second")]
    assert await tg.gateway.state.get_json(f"chat-moved-from:{new}") == str(OLD_GROUP["id"])


def given_up(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("delivery abandoned")]


def gone(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith("recipient gone")]


def scraped(name: str) -> float:
    """The telegram series of counter ``name`` as the metrics endpoint shows it (0 when absent)."""
    for family in text_string_to_metric_families(exposition("test-bot").decode()):
        for sample in family.samples:
            if sample.name == name and sample.labels.get("platform") == "telegram":
                return sample.value
    return 0.0


GIVEN_UP, GONE = "clarigate_deliveries_given_up_total", "clarigate_deliveries_recipient_gone_total"


@pytest.mark.parametrize(
    "description",
    [
        "Forbidden: bot was blocked by the user",
        "Forbidden: user is deactivated",
    ],
)
async def test_a_chat_that_blocked_the_bot_is_sent_nothing_after_the_first_refusal(
    bench, caplog, description
):
    # a reply then a question; Telegram answers 403 to the reply: the question (and its text
    # version) are not tried; the recipient is gone, which is no failure: counted apart from the
    # given-up deliveries (the ClarigateRepliesGivenUp alert), one WARNING, no ERROR
    request = choice_request("Which region?", ["eu", "us"])
    tg = await bench(ScriptedRunner(lambda turn: asking(request, replies=["Let me ask first."])))
    tg.api.block(ALICE["id"], description)
    before = scraped(GIVEN_UP), scraped(GONE)
    with caplog.at_level(logging.INFO):
        await tg.deliver(message_update("deploy it"))
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["Let me ask first."]
    assert (scraped(GIVEN_UP), scraped(GONE)) == (before[0], before[1] + 2)  # the reply and the question
    assert [r.levelno for r in gone(caplog)] == [logging.WARNING, logging.INFO]
    assert description in gone(caplog)[0].getMessage()
    assert not given_up(caplog)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "description",
    [
        "Forbidden: bot was kicked from the supergroup chat",
        "Forbidden: bot was kicked from the group chat",
        "Forbidden: bot is not a member of the supergroup chat",
    ],
)
async def test_a_question_in_a_group_that_kicked_the_bot_has_no_text_version_sent(bench, caplog, description):
    request = choice_request("Which region?", ["eu", "us"])
    tg = await bench(ScriptedRunner(lambda turn: asking(request)))
    tg.api.block(GROUP["id"], description)
    before = scraped(GIVEN_UP), scraped(GONE)
    with caplog.at_level(logging.INFO):
        await tg.deliver(mention_update("deploy it"))
    [refused] = tg.api.of("sendMessage")
    assert refused.params["reply_markup"]  # the question with its buttons, and nothing after it
    assert (scraped(GIVEN_UP), scraped(GONE)) == (before[0], before[1] + 1)
    assert [r.levelno for r in gone(caplog)] == [logging.WARNING]
    assert not given_up(caplog)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
