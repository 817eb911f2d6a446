"""Media reaches the agent: photos as image attachments fetched later, other things described."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Attachment

from .harness import message_update


def photo_sizes(*sizes: tuple[str, int, int]) -> list[dict]:
    return [
        {"file_id": fid, "file_unique_id": f"u{fid}", "width": side, "height": side, "file_size": size}
        for fid, side, size in sizes
    ]


async def test_a_photo_with_a_caption_keeps_both_and_the_largest_size_within_the_cap(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    sizes = photo_sizes(("small", 90, 1_000), ("medium", 800, 80_000), ("huge", 4000, 9_000_000))
    await tg.deliver(message_update(None, photo=sizes, caption="what is wrong in this chart?"))
    message = accepted[0]
    assert message.text == "what is wrong in this chart?"
    assert [(a.kind, a.ref, a.size) for a in message.attachments] == [("image", "medium", 80_000)]
    assert runner.calls[0].text.startswith("what is wrong in this chart?")
    assert "photo.jpg" in runner.calls[0].text  # the agent hears of it even without seeing it


async def test_documents_voice_and_stickers_are_described_and_never_unanswered(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    document = {
        "file_id": "doc1",
        "file_unique_id": "ud1",
        "file_name": "plan.pdf",
        "mime_type": "application/pdf",
    }
    voice = {"file_id": "v1", "file_unique_id": "uv1", "duration": 7, "mime_type": "audio/ogg"}
    sticker = {
        "file_id": "s1",
        "file_unique_id": "us1",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "emoji": "👍",
    }
    await tg.deliver(message_update(None, document=document))
    await tg.deliver(message_update(None, voice=voice))
    await tg.deliver(message_update(None, sticker=sticker))
    await tg.deliver(message_update(None, location={"latitude": 52.52, "longitude": 13.405}))
    described = [[a.describe() for a in m.attachments] for m in accepted]
    assert described == [
        ["plan.pdf, application/pdf"],
        ["voice message (7 s), audio/ogg"],
        ["sticker 👍"],
        ["location 52.52000, 13.40500"],
    ]
    assert len(runner.calls) == 4 and all(m.text == "" for m in accepted)
    assert len(tg.api.of("sendMessage")) == 4  # each got its answer


async def test_fetch_attachment_downloads_through_get_file_within_the_limit(bench):
    tg = await bench()
    tg.api.add_file("medium", b"\x89PNG" + b"0" * 100)
    photo = Attachment(kind="image", name="photo.jpg", ref="medium", size=104)
    assert await tg.adapter.fetch_attachment(photo, max_bytes=1_000) == b"\x89PNG" + b"0" * 100
    assert [c.params["file_id"] for c in tg.api.of("getFile")] == ["medium"]
    assert await tg.adapter.fetch_attachment(photo, max_bytes=50) is None  # too large: not even asked
    unsized = photo.model_copy(update={"size": None})
    assert await tg.adapter.fetch_attachment(unsized, max_bytes=50) is None  # getFile tells the size
    gone = Attachment(kind="image", ref="deleted-file")
    assert await tg.adapter.fetch_attachment(gone, max_bytes=1_000) is None


async def test_a_venue_reaches_the_agent_by_its_name_and_address(bench):
    """Telegram sends a venue with its ``location`` as well ("for backward compatibility"): the
    agent hears which place was shared, not only its coordinates."""
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    place = {"latitude": 52.516275, "longitude": 13.377704}
    venue = {"location": place, "title": "Brandenburg Gate", "address": "Pariser Platz, Berlin"}
    await tg.deliver(message_update(None, venue=venue, location=place))
    described = [a.describe() for a in accepted[0].attachments]
    assert described == ["venue Brandenburg Gate, Pariser Platz, Berlin (52.51628, 13.37770)"]
    assert len(tg.api.of("sendMessage")) == 1


async def test_a_photo_telegram_will_not_hand_over_is_told_to_the_person_and_the_agent(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    sizes = photo_sizes(("gone", 800, 80_000))  # getFile: "Bad Request: invalid file_id"
    await tg.deliver(message_update(None, photo=sizes, caption="what is wrong here?"))
    await tg.gateway.drain()
    [turn] = runner.calls
    assert (
        turn.images == ()
        and "(attached: photo.jpg, image/jpeg, 80000 bytes — could not be loaded)" in turn.text
    )
    told = [c.params.get("text") for c in tg.api.of("sendMessage")]
    assert "I could not open photo.jpg you sent, so I have not seen it." in told
