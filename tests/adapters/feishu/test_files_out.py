"""Files the agent sends reach Feishu as an uploaded file and image, each shown by one message.

A real LangGraph agent (scripted model) whose tool returns a CSV and a PNG as content blocks;
lark-oapi uploads them (``im/v1/files``, ``im/v1/images``, multipart) to the fake open API,
which keeps what each image or file message shows.
"""

from __future__ import annotations

import base64

import pytest
from langchain_core.messages.content import create_file_block, create_image_block

from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.boundary.port import DeliveryFailed

from ..files_agent import CSV, PNG, blocks_runner, files_runner
from .events import message_event


def received(api) -> list[tuple[str, str, bytes]]:  # type: ignore[no-untyped-def]
    return list(api.uploads.sent.values())


def uploads(api) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        c.path.rsplit("/", 1)[-1] for c in api.calls if c.path.endswith(("/im/v1/images", "/im/v1/files"))
    ]


async def test_a_tools_csv_and_png_arrive_as_a_file_and_an_image_once(make_bot):
    runner = await files_runner()
    bot = await make_bot(runner)
    try:
        await bot.deliver(message_event("sales report for eu"))
        await bot.gateway.drain()
        assert received(bot.api) == [("file", "report.csv", CSV), ("image", "", PNG)]
        assert [f[0] for f in bot.api.uploads.files.values()] == ["stream"]  # a CSV is a "stream" file
    finally:
        await runner.aclose()


async def test_an_upload_that_failed_is_retried_and_each_file_shown_once(make_bot):
    runner = await files_runner()
    bot = await make_bot(runner)
    try:
        bot.api.fail_next(500, 1, times=1, method="POST", path_part="/im/v1/files")  # the CSV's upload
        await bot.deliver(message_event("sales report for eu"))
        await bot.gateway.drain()
        assert received(bot.api) == [("file", "report.csv", CSV), ("image", "", PNG)]
        assert uploads(bot.api) == ["files", "files", "images"]  # the failed upload, then one each
    finally:
        await runner.aclose()


async def test_a_file_over_the_limit_is_refused_with_a_line_saying_so(make_bot):
    runner = await files_runner()
    bot = await make_bot(runner, files_out={"max_bytes": 40})
    try:
        await bot.deliver(message_event("sales report for eu"))
        await bot.gateway.drain()
        assert received(bot.api) == [("file", "report.csv", CSV)]
        shown = [str(card) for card in bot.api.shown()] + list(bot.api.texts.values())
        refusal = "I cannot send chart.png (69 bytes): files over 40 bytes cannot be sent here."
        assert any(refusal in text for text in shown)
        assert uploads(bot.api) == ["files"]
    finally:
        await runner.aclose()


async def test_a_retry_after_the_upload_sends_that_upload_and_feishu_shows_it_once(make_bot):
    bot = await make_bot()
    item = FileReply(name="report.csv", mime_type="text/csv", data=CSV, delivery_id="d-1")
    chat = Conversation(platform="feishu", chat_id="oc_chat", is_direct=True)
    bot.api.fail_next(500, 1, method="POST", path_part="/im/v1/messages")  # the message, after the upload
    with pytest.raises(DeliveryFailed):
        await bot.adapter.send_file(chat, item)
    await bot.adapter.send_file(chat, item)  # the core's retry: the upload remembered
    await bot.adapter.send_file(chat, item)  # sent again after a lost answer: the same uuid
    assert uploads(bot.api) == ["files"]
    assert received(bot.api) == [("file", "report.csv", CSV)]


async def test_files_without_a_reply_leave_no_working_card_behind(make_bot):
    runner = await files_runner(reply="")
    bot = await make_bot(runner, streaming="off")
    try:
        await bot.deliver(message_event("sales report for eu"))
        await bot.gateway.drain()
        assert [kind for kind, _, _ in received(bot.api)] == ["file", "image"]
        assert not any("Working" in str(card) for card in bot.api.shown())
    finally:
        await runner.aclose()


def test_what_feishu_shows_as_an_image_and_which_file_type_a_file_is():
    from clarigate.adapters.feishu.upload import MAX_IMAGE_BYTES, as_image, file_type

    png = FileReply(name="chart.png", mime_type="image/png", data=PNG, image=True)
    assert as_image(png)
    assert not as_image(
        png.model_copy(update={"mime_type": "image/svg+xml"})
    )  # not a type im/v1/images takes
    assert not as_image(png.model_copy(update={"data": b"\x00" * (MAX_IMAGE_BYTES + 1)}))  # sent as a file
    assert not as_image(png.model_copy(update={"image": False}))  # the agent made it a file
    assert [file_type(n) for n in ("a.PDF", "b.docx", "c.xlsx", "d.csv", "e")] == [
        "pdf",
        "doc",
        "xls",
        "stream",
        "stream",
    ]


PDF = b"%PDF-1.4\n%%EOF\n"
#: A GIF of 2400 x 10 pixels: over the 2000 x 2000 ``im/v1/images`` takes for a GIF.
WIDE_GIF = b"GIF89a" + (2400).to_bytes(2, "little") + (10).to_bytes(2, "little") + b"\x00\x00\x00;"


def shown_texts(api) -> list[str]:  # type: ignore[no-untyped-def]
    return [str(card) for card in api.shown()] + list(api.texts.values())


async def test_an_empty_file_is_not_uploaded_and_a_line_names_it(make_bot):
    empty = {"type": "file", "base64": "", "mime_type": "text/plain", "filename": "empty.txt"}
    pdf = create_file_block(
        base64=base64.b64encode(PDF).decode(), mime_type="application/pdf", filename="r.pdf"
    )
    runner = await blocks_runner([empty, pdf])
    bot = await make_bot(runner)
    try:
        await bot.deliver(message_event("the files please"))
        await bot.gateway.drain()
        assert received(bot.api) == [("file", "r.pdf", PDF)]
        assert any("I cannot send empty.txt: the file is empty." in text for text in shown_texts(bot.api))
    finally:
        await runner.aclose()


async def test_a_file_feishu_refuses_for_good_is_named_in_a_line_once(make_bot):
    pdf = create_file_block(
        base64=base64.b64encode(PDF).decode(), mime_type="application/pdf", filename="r.pdf"
    )
    runner = await blocks_runner([pdf])
    bot = await make_bot(runner)
    try:
        bot.api.fail_next(400, 234001, method="POST", path_part="/im/v1/files")  # refused: not retried
        await bot.deliver(message_event("the files please"))
        await bot.gateway.drain()
        assert received(bot.api) == [] and uploads(bot.api) == ["files"]
        lines = [t for t in shown_texts(bot.api) if "I could not send r.pdf: it was not accepted here." in t]
        assert len(lines) == 1
    finally:
        await runner.aclose()


async def test_an_image_past_the_pixel_limits_is_sent_as_a_file(make_bot):
    gif = create_image_block(
        base64=base64.b64encode(WIDE_GIF).decode(), mime_type="image/gif", filename="wide.gif"
    )
    runner = await blocks_runner([gif])
    bot = await make_bot(runner)
    try:
        await bot.deliver(message_event("the chart please"))
        await bot.gateway.drain()
        assert received(bot.api) == [("file", "wide.gif", WIDE_GIF)]
        assert uploads(bot.api) == ["images", "files"]
        assert not any("not accepted" in text for text in shown_texts(bot.api))
    finally:
        await runner.aclose()


#: The start of an MP4 (an ``ftyp`` box) and of an Ogg Opus stream: what the agent made.
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
OPUS = b"OggS\x00\x02" + b"\x00" * 20 + b"OpusHead"


async def test_a_video_and_a_voice_message_arrive_as_feishu_shows_them(make_bot):
    """Feishu sends a file uploaded as ``mp4`` as a video message ("media") and one uploaded as
    ``opus`` as a voice message ("audio"); as a "file" message it refuses them (230055)."""
    video = create_file_block(
        base64=base64.b64encode(MP4).decode(), mime_type="video/mp4", filename="demo.mp4"
    )
    voice = create_file_block(
        base64=base64.b64encode(OPUS).decode(), mime_type="audio/ogg", filename="hi.opus"
    )
    runner = await blocks_runner([video, voice])
    bot = await make_bot(runner)
    try:
        await bot.deliver(message_event("show me the demo"))
        await bot.gateway.drain()
        assert received(bot.api) == [("media", "demo.mp4", MP4), ("audio", "hi.opus", OPUS)]
        assert not any("not accepted" in text for text in shown_texts(bot.api))
    finally:
        await runner.aclose()
