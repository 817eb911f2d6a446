"""A photo or file under a command caption is never lost: ``/new`` starts the new conversation with
it, any other command answers and says it was not passed on."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner

from .harness import message_update

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 64
PHOTO = [{"file_id": "pic-1", "file_unique_id": "upic-1", "width": 800, "height": 600, "file_size": len(PNG)}]
PLAN = {
    "file_id": "doc-1",
    "file_unique_id": "udoc-1",
    "file_name": "plan.pdf",
    "mime_type": "application/pdf",
}
NOT_SENT = "I did not pass on photo.jpg: a command takes nothing with it. Send it again with your request."


def captioned(caption: str, **media: Any) -> dict[str, Any]:
    """A private message with ``media`` (``photo=``, ``document=``) and a caption starting with a
    command, marked as Telegram marks it (``caption_entities``, a ``bot_command`` at offset 0)."""
    command = caption.split(maxsplit=1)[0]
    entities = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    return message_update(None, caption=caption, caption_entities=entities, **media)


async def test_a_photo_under_new_starts_the_new_conversation_with_the_rest_of_the_caption(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    tg.api.add_file("pic-1", PNG)
    await tg.deliver(message_update("deploy the docs"))
    old_thread = runner.calls[0].thread_id

    await tg.deliver(captioned("/new what is in this picture?", photo=PHOTO))

    sent = [c.params["text"] for c in tg.api.of("sendMessage")]
    assert sent[-2].startswith("Started a new conversation")
    first = runner.calls[1]  # the new conversation's first message: the photo and the caption's words
    assert first.thread_id != old_thread
    assert first.text.startswith("what is in this picture?") and "/new" not in first.text
    assert [image.data for image in first.images] == [PNG]
    assert sent[-1].startswith("You said: what is in this picture?")  # the agent's reply, after


async def test_a_file_under_new_reaches_the_agent_even_without_words(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(captioned("/new", document=PLAN))
    (call,) = runner.calls
    assert "plan.pdf" in call.text


async def test_a_photo_under_a_command_that_takes_none_is_said_not_to_be_passed_on(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    tg.api.add_file("pic-1", PNG)
    for caption in ("/status", "/help what is this?"):
        tg.new_calls()
        await tg.deliver(captioned(caption, photo=PHOTO))
        answer, note = (c.params["text"] for c in tg.new_calls() if c.method == "sendMessage")
        assert answer.startswith(("Where this conversation stands", "Just write what you need"))
        assert note == NOT_SENT
    assert runner.calls == []  # the commands answered; the agent never ran
