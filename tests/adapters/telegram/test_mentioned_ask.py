"""``/ask …`` written after the bot's @mention (``@clari_bot /ask summarize the logs``: Telegram
marks a ``mention`` entity at its start and a ``bot_command`` one after it), and ``/ask …`` as the
caption of an album's item, are requests exactly as ``/ask@clari_bot summarize the logs`` is: the
agent reads the words alone, and a question still open closes ("sent a new message instead")
instead of taking them as its answer. Real python-telegram-bot against the fake Bot API."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request, text_request

from .conftest import redis_store
from .fake_bot_api import BOT_USER
from .harness import ALICE, GROUP, mention_update, message_update, private_chat
from .test_albums import PNG, album, post_all
from .test_ask_over_question import QUESTIONS, asked_in, ran_as_request
from .test_choices import ask_then_echo

HANDLE = f"@{BOT_USER['username']}"
REQUEST = "summarize the logs"


def entities_of(words: str) -> list[dict[str, Any]]:
    """Telegram's entities for ``@clari_bot /ask …``: the mention, then the command after it."""
    command = words.split(maxsplit=1)[0]
    return [
        {"type": "mention", "offset": 0, "length": len(HANDLE)},
        {"type": "bot_command", "offset": len(HANDLE) + 1, "length": len(command)},
    ]


def mentioned(words: str, **kw: Any) -> dict[str, Any]:
    """``@clari_bot /ask …`` in the group."""
    return message_update(f"{HANDLE} {words}", ALICE, GROUP, entities=entities_of(words), **kw)


async def test_a_mentioned_ask_is_the_request_alone(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(mentioned(f"/ask {REQUEST}"))
    await tg.settle()
    assert runner.calls[-1].text == REQUEST


@pytest.mark.parametrize("question", QUESTIONS, ids=["text", "choice"])
async def test_a_mentioned_ask_closes_the_open_question_and_runs(bench, redis_prefix, question):
    runner = ScriptedRunner(ask_then_echo(question))
    tg = await bench(runner, store=redis_store(redis_prefix))
    await tg.deliver(mention_update("deploy", ALICE, thread_id=77))
    asked, _ = asked_in(tg)

    await tg.deliver(mentioned(f"/ask {REQUEST}", thread_id=77))
    await tg.settle()
    ran_as_request(runner)
    assert "✖ Closed: Alice sent a new message instead" in tg.api.messages[(GROUP["id"], asked)][0]


def ask_album(group_id: str, at: int, chat: dict[str, Any] | None = None, mention: bool = False) -> list:
    """Two photos, item ``at`` captioned ``/ask summarize the logs`` (after the bot's @mention)."""
    caption = f"/ask {REQUEST}"
    entities = [{"type": "bot_command", "offset": 0, "length": len("/ask")}]
    if mention:
        caption, entities = f"{HANDLE} {caption}", entities_of(caption)
    return album(group_id, 2, caption, chat=chat, at=at, caption_entities=entities)


@pytest.mark.parametrize("at", [0, 1])
async def test_an_album_asked_in_a_caption_is_a_new_request_over_an_open_question(bench, at):
    runner = ScriptedRunner(ask_then_echo(text_request("Which log file?")))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy", ALICE, private_chat(ALICE)))
    group_id = f"93{at}"
    for n in range(2):
        tg.api.add_file(f"{group_id}-{n}", PNG)

    await post_all(tg, ask_album(group_id, at))
    ran = runner.calls[-1]
    assert ran.response is None  # not the question's answer
    assert ran.text.split("\n\n")[0] == REQUEST  # the words alone, then the photos noted
    assert len(ran.images) == 2


async def test_a_group_album_asked_after_a_mention_is_the_request_with_every_photo(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which log file?", ["app.log", "db.log"])))
    tg = await bench(runner)
    for n in range(2):
        tg.api.add_file(f"9400-{n}", PNG)
    await post_all(tg, ask_album("9400", 1, chat=GROUP, mention=True))
    assert len(runner.calls) == 1
    assert runner.calls[0].text.split("\n\n")[0] == REQUEST and len(runner.calls[0].images) == 2
