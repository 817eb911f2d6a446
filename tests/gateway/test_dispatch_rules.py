"""Small rules of the dispatcher: what counts as /new, what the agent reads, token shape."""

from __future__ import annotations

import pytest

from gateway.dispatch import is_new_thread_command, message_text, new_token
from gateway.messages import Attachment, Conversation, InboundMessage, Sender


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/new", True),
        ("  /NEW  ", True),
        ("/new@clarigate_bot", True),
        ("/new please", True),
        ("/reset", True),
        ("new", False),
        ("/newer", False),
        ("", False),
        ("tell me about /new", False),
    ],
)
def test_new_thread_command(text, expected):
    assert is_new_thread_command(text) is expected


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
