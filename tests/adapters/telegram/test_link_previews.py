"""Model text is untrusted: a link in it never brings the linked site's preview (its own title,
description and picture) under the bot's message. Every text the bot sends or edits asks Telegram
for none (``link_preview_options``), ephemeral notes included."""

from __future__ import annotations

import json
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .harness import callback_update, message_update
from .test_private_notes import alice_asked_then_bob_cancels, ask

LINKED = "Your session expired: https://evil.example/login"
QUESTION = choice_request("Log in where? https://evil.example/a", ["https://evil.example/b", "Here"])


def _no_preview(params: dict[str, Any]) -> bool:
    options = params.get("link_preview_options")
    options = json.loads(options) if isinstance(options, str) else options
    return bool(options) and options.get("is_disabled") is True


def ask_then_link(turn: Turn) -> TurnOutput:
    """The first turn asks QUESTION, the next replies with a link."""
    return asking(QUESTION) if turn.response is None else TurnOutput(replies=[LINKED])


async def test_a_reply_with_a_link_is_sent_without_its_preview(bench):
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[LINKED])))
    await tg.deliver(message_update("why can't I log in?"))
    sent = tg.api.of("sendMessage")[-1].params
    assert "https://evil.example/login" in sent["text"]
    assert _no_preview(sent), sent


async def test_every_text_sent_or_edited_asks_for_no_preview(bench):
    tg = await bench(ScriptedRunner(ask_then_link))
    await tg.deliver(message_update("log me in"))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    await tg.deliver(callback_update(asked.buttons[0][0]["callback_data"], 1000))
    texts = [*tg.api.of("sendMessage"), *tg.api.of("editMessageText")]
    assert tg.api.of("editMessageText") and any("evil.example/login" in c.params["text"] for c in texts)
    assert all(_no_preview(call.params) for call in texts), [c.params for c in texts]


async def test_a_note_for_one_member_asks_for_no_preview(bench):
    tg = await bench(ScriptedRunner(ask))
    tg.api.ephemeral = True  # a Bot API 10.2 server
    await alice_asked_then_bob_cancels(tg)
    (note,) = [c for c in tg.api.of("sendMessage") if c.params.get("receiver_user_id")]
    assert _no_preview(note.params), note.params
