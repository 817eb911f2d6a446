"""A thread (话题) the person starts under the bot's message in a one-to-one chat.

Feishu sends a message written in a thread with ``thread_id`` (``omt_…``) and ``root_id`` /
``parent_id`` naming the thread's root (im.message.receive_v1; im-v1 message intro: "在话题内回复
的消息，都是在回复根消息"); the first reply in a thread under the bot's message names that message.
It goes on with the conversation the bot's message belonged to (the agent's thread, its open
question) and is answered in that thread (a reply to the root with ``reply_in_thread: true``).
"""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .cards import is_interactive, text_of
from .events import message_event
from .test_p2p_threads import agent  # asks on "deploy", says what was chosen, echoes the rest

CHAT = "/open-apis/im/v1/messages"


def message_showing(bot, words: str) -> str:
    """The id of the bot's message whose card shows ``words``."""
    return next(mid for mid, card in bot.api.cards.items() if words in text_of(card))


async def say(bot, event: dict) -> None:
    await bot.deliver(event)
    await bot.gateway.drain()


async def test_a_thread_under_the_bots_reply_goes_on_with_the_chat(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await say(bot, message_event("hello"))
    root = message_showing(bot, "You said: hello")
    before = len(bot.api.posted())

    await say(bot, message_event("and then?", root_id=root))
    chat, thread = bot.runner.calls
    assert thread.thread_id == chat.thread_id  # the agent's thread: it sees "hello" and its answer
    later = bot.api.posted()[before:]
    assert later and all(c.path == f"{CHAT}/{root}/reply" for c in later)
    assert all(c.body["reply_in_thread"] is True for c in later)
    assert "You said: and then?" in text_of(bot.api.cards[message_showing(bot, "and then?")])

    await say(bot, message_event("in the chat again"))  # the chat's own conversation still
    assert bot.runner.calls[-1].thread_id == chat.thread_id
    assert bot.api.posted()[-1].path == CHAT


async def test_an_answer_in_a_thread_under_the_question_card_answers_it(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await say(bot, message_event("deploy it"))
    question = message_showing(bot, "Which framework?")
    assert is_interactive(bot.api.cards[question])
    before = len(bot.api.posted())

    await say(bot, message_event("Vue", root_id=question))  # typed in a thread under the card
    asked, answered = bot.runner.calls
    assert answered.response is not None and answered.response.value == "Vue"
    assert answered.thread_id == asked.thread_id
    later = bot.api.posted()[before:]
    assert later and all(c.path == f"{CHAT}/{question}/reply" for c in later)
    assert any("Going with Vue." in text_of(card) for card in bot.api.shown())


async def test_a_thread_under_the_persons_own_message_is_still_its_own(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await say(bot, message_event("hello", message_id="om_mine"))
    await say(bot, message_event("in my thread", root_id="om_mine"))
    chat, thread = bot.runner.calls
    assert thread.thread_id != chat.thread_id
    assert bot.api.posted()[-1].path == f"{CHAT}/om_mine/reply"
