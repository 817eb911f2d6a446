"""Who is talking, as a Telegram update tells it: the run's speaker names the person (their name
and interface language) and the kind of chat."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .harness import ALICE, GROUP, mention_update, message_update


async def test_the_speaker_has_the_persons_name_language_and_the_chat_type(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("hi", user={**ALICE, "language_code": "en"}))
    await tg.deliver(mention_update("deploy", user={**ALICE, "last_name": "Liddell"}, chat=GROUP))
    # the two chats' runs go on at once: tell them apart by chat, not by the order they started
    speakers = {c.speaker["conversation"]["chat_type"]: c.speaker for c in runner.calls if c.speaker}
    private, group = speakers.get("private"), speakers.get("group")
    assert private is not None and group is not None
    assert private["sender"] == {
        "user_id": "111",
        "display_name": "Alice",
        "locale": "en",
        "may_answer": True,
    }
    assert private["conversation"]["chat_type"] == "private"
    assert private["conversation"]["chat_id"] == "111" and private["conversation"]["thread"] is None
    assert group["sender"]["display_name"] == "Alice Liddell" and group["sender"]["locale"] is None
    assert group["conversation"]["chat_type"] == "group"  # a supergroup is a group
    assert group["conversation"]["chat_id"] == str(GROUP["id"])
    assert group["conversation"]["thread"] is not None
