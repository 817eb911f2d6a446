"""Who is talking, as a Feishu event tells it: the run's speaker names the person by open_id (the
event carries no name or locale: None) and the kind of chat (p2p or group)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .events import message_event


async def test_the_speaker_names_the_person_and_the_kind_of_chat(make_bot):
    bot = await make_bot(ScriptedRunner())
    await bot.deliver(message_event("hi", user="ou_alice"))
    await bot.deliver(message_event("go", user="ou_bob", chat="oc_g", chat_type="group", mention_bot=True))
    await bot.gateway.drain()
    # the two chats' runs go on at once: tell them apart by chat, not by the order they started
    speakers = {c.speaker["conversation"]["chat_type"]: c.speaker for c in bot.runner.calls if c.speaker}
    private, group = speakers.get("private"), speakers.get("group")
    assert private is not None and group is not None
    assert private["sender"] == {
        "user_id": "ou_alice",
        "display_name": None,
        "locale": None,
        "may_answer": True,
    }
    assert private["conversation"]["chat_type"] == "private" and private["conversation"]["thread"] is None
    assert group["sender"]["user_id"] == "ou_bob"
    assert group["conversation"]["chat_type"] == "group" and group["conversation"]["chat_id"] == "oc_g"
    assert group["conversation"]["thread"] is not None and group["conversation"]["workspace"]
