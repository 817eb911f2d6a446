"""Files the agent sends reach Telegram as a document and a photo, once each, retries included.

A real LangGraph agent (scripted model) whose tool returns a CSV and a PNG as content blocks;
PTB uploads them as multipart to the fake Bot API, which keeps what the chat shows.
"""

from __future__ import annotations

from typing import Any

from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.store.memory import MemoryStore

from ..files_agent import CSV, PNG, files_runner
from .harness import ALICE, message_update, open_bench


def received(api: Any) -> list[tuple[str, str, bytes]]:
    return [(f.kind, f.name, f.data) for f in api.sent_files]


async def test_a_tools_csv_and_png_arrive_as_a_document_and_a_photo_once(bot_api):
    store = MemoryStore("files-telegram")
    tg = await open_bench(bot_api, store, await files_runner())
    try:
        await tg.deliver(message_update("sales report for eu"))
        await tg.settle()
        assert received(bot_api) == [("document", "report.csv", CSV), ("photo", "chart.png", PNG)]
        assert {f.chat_id for f in bot_api.sent_files} == {ALICE["id"]}
        assert bot_api.of("sendMessage")[-1].params["text"] == "Here is the report."
    finally:
        await tg.close()
        await store.close()


async def test_a_file_that_failed_with_a_server_error_is_sent_once_on_the_retry(bot_api):
    store = MemoryStore("files-telegram-retry")
    tg = await open_bench(bot_api, store, await files_runner())
    try:
        bot_api.fail_next("sendDocument", 500)
        bot_api.fail_next("sendPhoto", 429, retry_after=1)
        await tg.deliver(message_update("sales report for eu"))
        await tg.settle()
        assert received(bot_api) == [("document", "report.csv", CSV), ("photo", "chart.png", PNG)]
        assert (len(bot_api.of("sendDocument")), len(bot_api.of("sendPhoto"))) == (2, 2)
    finally:
        await tg.close()
        await store.close()


async def test_a_file_over_the_limit_is_refused_with_a_line_saying_so(bot_api):
    store = MemoryStore("files-telegram-big")
    tg = await open_bench(bot_api, store, await files_runner(), files_out={"max_bytes": 40})
    try:
        await tg.deliver(message_update("sales report for eu"))
        await tg.settle()
        assert received(bot_api) == [("document", "report.csv", CSV)]
        texts = [c.params["text"] for c in bot_api.of("sendMessage")]
        assert "I cannot send chart.png (69 bytes): files over 40 bytes cannot be sent here." in texts
    finally:
        await tg.close()
        await store.close()


async def test_a_long_caption_is_split_and_a_retry_posts_neither_file_nor_piece_twice(bot_api):
    store = MemoryStore("files-telegram-caption")
    tg = await open_bench(bot_api, store, await files_runner())
    try:
        caption = " ".join(["word"] * 400)  # 1999 characters: two pieces of at most 1024
        item = FileReply(name="report.csv", data=CSV, caption=caption, delivery_id="d-1")
        chat = Conversation(platform="telegram", chat_id=str(ALICE["id"]), is_direct=True)
        bot_api.fail_next("sendMessage", 500)  # the caption's second piece fails once
        adapter = tg.adapter
        try:
            await adapter.send_file(chat, item)
        except Exception as failure:  # noqa: BLE001 (the core would retry this)
            assert getattr(failure, "permanent", True) is False
        await adapter.send_file(chat, item)

        [sent] = bot_api.sent_files
        rest = bot_api.of("sendMessage")[-1].params["text"]
        assert len(sent.caption) <= 1024 and (sent.caption + " " + rest).split() == caption.split()
    finally:
        await tg.close()
        await store.close()


async def test_an_image_telegram_will_not_take_as_a_photo_goes_as_a_document(bot_api):
    store = MemoryStore("files-telegram-photo")
    tg = await open_bench(bot_api, store, await files_runner())
    try:
        bot_api.fail_next("sendPhoto", 400, description="Bad Request: PHOTO_INVALID_DIMENSIONS")
        await tg.deliver(message_update("sales report for eu"))
        await tg.settle()
        assert received(bot_api) == [("document", "report.csv", CSV), ("document", "chart.png", PNG)]
    finally:
        await tg.close()
        await store.close()
