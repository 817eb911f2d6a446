"""Links in what people write: a ``text_link`` (words linked to a URL) reaches the agent with its
URL, in a message, a command's words and a caption (Bot API ``MessageEntity``)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .fake_bot_api import BOT_USER
from .harness import GROUP, message_update

DOCS = "https://docs.example.com/deploy"


async def test_a_linked_word_reaches_the_agent_with_its_url(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    # "see the 📘 guide and example.com": "guide" links to DOCS; offsets count UTF-16 units (📘 is 2)
    text = "see the 📘 guide and example.com"
    entities = [
        {"type": "text_link", "offset": 11, "length": 5, "url": DOCS},
        {"type": "text_link", "offset": 21, "length": 11, "url": "https://example.com"},
    ]
    await tg.deliver(message_update(text, entities=entities))
    assert runner.calls[-1].text == f"see the 📘 guide ({DOCS}) and example.com"


async def test_a_linked_word_in_an_ask_and_under_a_photo_keeps_its_url(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    ask = f"/ask@{BOT_USER['username']}"
    command = {"type": "bot_command", "offset": 0, "length": len(ask)}
    link = {"type": "text_link", "offset": len(ask) + 8, "length": 5, "url": DOCS}
    await tg.deliver(message_update(f"{ask} follow these steps", chat=GROUP, entities=[command, link]))
    assert runner.calls[-1].text == f"follow these ({DOCS}) steps"

    photo = [{"file_id": "p1", "file_unique_id": "u1", "width": 90, "height": 90, "file_size": 900}]
    caption_link = {"type": "text_link", "offset": 12, "length": 4, "url": DOCS}
    await tg.deliver(
        message_update(None, photo=photo, caption="is this the page?", caption_entities=[caption_link])
    )
    assert runner.calls[-1].text.startswith(f"is this the page ({DOCS})?")
