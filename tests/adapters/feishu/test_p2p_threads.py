"""A thread (话题) in the bot's one-to-one chat: answered in that thread, its own conversation.

Feishu marks a message written in a thread with ``thread_id`` (``omt_…``); its ``root_id`` and
``parent_id`` are the thread's root message (im-v1 message intro: "在话题内回复的消息，都是在回复根
消息"). A reply goes into the thread as a reply to the root with ``reply_in_thread: true``. A
quoting reply (引用回复) in the chat carries ``root_id``/``parent_id`` but no ``thread_id``.
"""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, echo
from clarigate.agent.harness import TurnOutput

from .cards import is_interactive, text_of
from .events import message_event

ROOT = "/open-apis/im/v1/messages/om_root/reply"


def agent(turn: Turn) -> TurnOutput:
    """Asks on "deploy", says what was chosen, echoes anything else."""
    if turn.response is not None:
        return TurnOutput(replies=[f"Going with {turn.response.value}."])
    if "deploy" in turn.text:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return echo(turn)


def in_chat(bot) -> list:
    """Messages posted in the p2p chat itself (not replies)."""
    return [c for c in bot.api.posted() if c.path == "/open-apis/im/v1/messages"]


def quoting(text: str, root: str) -> dict:
    """A p2p message quoting ``root`` in the chat (引用回复): root and parent, no thread."""
    event = message_event(text)
    event["event"]["message"].update(root_id=root, parent_id=root)
    return event


async def test_a_message_in_a_p2p_thread_is_answered_in_that_thread(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("deploy it", message_id="om_in_thread", root_id="om_root"))
    await bot.gateway.drain()
    replies = [c for c in bot.api.posted() if c.path.endswith("/reply")]
    assert replies and in_chat(bot) == []
    assert all(c.path == ROOT and c.body["reply_in_thread"] is True for c in replies)
    question = list(bot.api.cards.values())[-1]
    assert is_interactive(question) and "Which framework?" in text_of(question)

    await bot.deliver(message_event("Vue", root_id="om_root"))  # the typed answer, in the thread
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response is not None and bot.runner.calls[-1].response.value == "Vue"
    assert in_chat(bot) == []
    assert any("Going with Vue." in text_of(card) for card in bot.api.shown())


async def test_a_p2p_thread_is_its_own_conversation(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    for event in (message_event("hello"), message_event("in the thread", root_id="om_root")):
        await bot.deliver(event)
        await bot.gateway.drain()
    await bot.deliver(message_event("again in the thread", root_id="om_root"))
    await bot.gateway.drain()
    main, thread, again = (c.thread_id for c in bot.runner.calls)
    assert main != thread == again


async def test_plain_and_quoting_p2p_messages_still_go_to_the_chat(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("hello"))
    await bot.deliver(quoting("quoting", "om_earlier"))
    await bot.gateway.drain()
    assert len({c.thread_id for c in bot.runner.calls}) == 1
    assert [c.path for c in bot.api.posted()] == ["/open-apis/im/v1/messages"] * 2
    assert {c.body["receive_id"] for c in in_chat(bot)} == {"oc_p2p"}
