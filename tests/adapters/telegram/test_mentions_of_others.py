"""A reply to the bot's message in a group that mentions other people but not the bot is said to
them: it does not run, and the open question stays open. A plain reply to the bot is still the
bot's (how people answer and follow up), and so is a command."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, BOB, GROUP, bot_message, command_update, mention_update, message_update
from .test_choices import ask_then_echo

CAROL = {"id": 333, "is_bot": False, "first_name": "Carol"}


async def test_a_reply_to_the_bot_that_talks_to_another_member_is_not_for_the_bot(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy", BOB))
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)

    by_name = [{"type": "mention", "offset": 0, "length": 6}]
    await tg.deliver(
        message_update("@carol what do you think?", ALICE, GROUP, reply_to=question, entities=by_name)
    )
    by_link = [{"type": "text_mention", "offset": 0, "length": 5, "user": CAROL}]
    await tg.deliver(message_update("Carol React, I'd say", BOB, GROUP, reply_to=question, entities=by_link))
    assert len(runner.calls) == 1  # said to Carol, not to the bot
    assert not tg.api.of("editMessageText")  # Bob's question is still open

    status = command_update("/status @carol", BOB, chat=GROUP, reply_to=question)
    status["message"]["entities"].append({"type": "mention", "offset": 8, "length": 6})
    await tg.deliver(status)  # a command is the bot's, whoever it names
    assert "Waiting for an answer to “Which framework?”" in tg.api.of("sendMessage")[-1].params["text"]

    await tg.deliver(message_update("2", BOB, GROUP, reply_to=question))  # no mention: the bot's
    assert [c.response.value for c in runner.calls if c.response] == ["Vue"]
