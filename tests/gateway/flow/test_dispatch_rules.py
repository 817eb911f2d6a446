"""Small rules of the dispatcher: what counts as a command, what the agent reads, token shape."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Attachment, Conversation, InboundMessage, Sender
from clarigate.gateway.flow.agent_run import new_token
from clarigate.gateway.flow.attachments import image_type, message_text
from clarigate.gateway.flow.commands import Command, parse_command
from clarigate.gateway.store.memory import MemoryStore


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/new", Command("new")),
        ("  /NEW  ", Command("new")),
        ("/new@clarigate_bot", Command("new")),
        ("/new please", Command("new", "please")),
        ("/reset", Command("new")),
        ("/cancel", Command("cancel")),
        ("／cancel", Command("cancel")),  # a full-width slash from a Chinese input method
        ("/status@clarigate_bot now", Command("status", "now")),
        ("/help", Command("help")),
        ("/start deep-link-payload", Command("start", "deep-link-payload")),
        ("new", None),
        ("/newer", None),
        ("/deploy the app", None),  # an unknown /word goes to the agent
        ("/", None),
        ("", None),
        ("tell me about /new", None),
        ("cancel", None),
    ],
)
def test_commands(text, expected):
    assert parse_command(text) == expected


def test_only_new_waits_for_its_turn():
    assert [name for name in ("new", "cancel", "status", "help", "start") if Command(name).in_turn] == ["new"]


def test_the_agent_reads_attachment_names():
    conv = Conversation(platform="test", chat_id="c")
    msg = InboundMessage(
        conversation=conv,
        sender=Sender(user_id="u"),
        text="see this",
        event_id="e",
        attachments=[
            Attachment(kind="file", name="plan.pdf", mime_type="application/pdf", size=2048),
            Attachment(kind="image", name="chart.png"),
        ],
    )
    assert message_text(msg) == "see this\n\n(attached: plan.pdf, application/pdf, 2048 bytes; chart.png)"
    assert message_text(msg.model_copy(update={"attachments": []})) == "see this"


def test_tokens_are_short_url_safe_and_distinct():
    tokens = {new_token() for _ in range(500)}
    assert len(tokens) == 500
    assert all(10 <= len(t) <= 20 and t.replace("-", "").replace("_", "").isalnum() for t in tokens)


async def test_the_gateways_words_follow_the_persons_app_language_when_the_text_says_nothing(
    make_gateway,
):
    def fail(turn):
        raise RuntimeError("the model is down")

    gateway, chat = await make_gateway(MemoryStore("language-hint"), ScriptedRunner(fail))
    await chat.say("👍", language="zh-hans", chat="zh")  # no sign of a language in the text
    await chat.say("👍", chat="plain")  # no language from the platform either: English
    await chat.say("please try this", language="zh-hans", chat="words")  # the words win
    await gateway.drain()
    assert chat.texts("zh") == ["抱歉，我这边出了问题，没能完成。请再试一次。"]
    assert chat.texts("plain")[0].startswith("Sorry, I could not finish that")
    assert chat.texts("words")[0].startswith("Sorry, I could not finish that")


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"RIFF\x24\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"<html>sign in</html>", None),
    ],
)
def test_an_images_type_is_read_from_its_bytes(head, kind):
    assert image_type(head) == kind
