"""Commands while a step-by-step form is open: they answer at once and the form keeps its place.

In a private chat a form takes typed values that reply to nothing while nothing from the agent
came after it; ``/status`` and ``/help`` are the gateway's answers, out of turn, not the agent's.
"""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import ErrorReply, FileReply, TextReply

from .harness import (
    ALICE,
    BOB,
    GROUP,
    bot_message,
    callback_update,
    command_update,
    mention_update,
    message_update,
)
from .test_choices import clarification_call
from .test_form_details import open_form, script

STATUS = "Where this conversation stands"
HELP = "Just write what you need."


def posted(tg) -> list[str]:
    """The texts of the messages the bot posted since the last look (``new_calls``)."""
    return [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]


@pytest.mark.parametrize(("command", "answer"), [("/status", STATUS), ("/help", HELP)])
async def test_in_private_a_command_leaves_the_form_taking_typed_values(bench, command, answer):
    tg, runner, form = await open_form(bench)  # Alice is on step 4/6, Replicas
    accepted, _ = tg.record()
    tg.new_calls()
    await tg.deliver(command_update(command))
    assert [t[: len(answer)] for t in posted(tg)] == [answer]  # answered at once
    await tg.deliver(message_update("3"))  # typed as before, a reply to nothing
    assert "5/6 · Deadline" in form.text and "✖ Closed" not in form.text
    await tg.deliver(command_update(command))  # again, on the next step
    await tg.deliver(message_update("2026-12-01"))
    assert "6/6 · Notes" in form.text
    await tg.settle()
    assert [m.text for m in accepted] == [command, command]  # the values stayed in the form
    assert [c.text for c in runner.calls] == ["deploy"]  # nothing went to the agent as a request
    assert [t[: len(answer)] for t in posted(tg)] == [answer]  # no "✖ Closed", no reply to a request

    await form.tap("k")  # Notes stays empty: the summary, then Submit
    await form.tap("S")
    values = runner.calls[-1].response.values
    assert (values["replicas"], values["deadline"]) == (3, "2026-12-01"), values
    assert "✅ Answered" in form.text


async def test_in_a_group_other_members_commands_leave_a_form_taking_its_replies(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy"))
    asked = clarification_call(tg)
    message_id = asked.result["message_id"]
    token = asked.buttons[0][0]["callback_data"].split("|")[0]
    for action in ("form", "s1", "d", "y"):
        await tg.deliver(callback_update(f"{token}|{action}", message_id, user=ALICE, chat=GROUP))
    assert "4/6 · Replicas" in tg.api.shown(GROUP["id"], message_id)
    tg.new_calls()

    await tg.deliver(command_update("/status@clari_bot", user=BOB, chat=GROUP))
    await tg.deliver(command_update("/help@clari_bot", user=BOB, chat=GROUP))
    await tg.deliver(command_update("/status@clari_bot", user=ALICE, chat=GROUP))
    await tg.settle()
    answers = posted(tg)
    assert [a.startswith(STATUS) for a in answers] == [True, False, True], answers
    assert "4/6 · Replicas" in tg.api.shown(GROUP["id"], message_id)

    form = bot_message(message_id, GROUP)
    await tg.deliver(message_update("3", chat=GROUP, reply_to=form))  # her reply to the form
    await tg.settle()
    assert "5/6 · Deadline" in tg.api.shown(GROUP["id"], message_id)
    assert [c.text for c in runner.calls] == ["deploy"]
    assert posted(tg) == []


ALICES = Conversation(platform="telegram", chat_id=str(ALICE["id"]), is_direct=True, chat_type="private")


@pytest.mark.parametrize(
    ("item", "takes_place"),
    [
        (TextReply(text="Only the asker can cancel this question."), False),  # the gateway's line
        (ErrorReply(text="Your message could not be handled."), False),
        (TextReply(text="Here is what I found.", from_agent=True), True),  # the agent's reply
        (FileReply(name="plan.csv", mime_type="text/csv", data=b"a,b\n"), True),  # the agent's file
    ],
    ids=["notice", "error", "agent-reply", "agent-file"],
)
async def test_in_private_only_what_the_agent_sends_takes_the_forms_place(bench, item, takes_place):
    tg, runner, form = await open_form(bench)
    if isinstance(item, FileReply):
        await tg.adapter.send_file(ALICES, item)
    else:
        await tg.adapter.send(ALICES, item)
    await tg.deliver(message_update("3"))
    await tg.settle()
    if takes_place:  # a message of its own: a new request, which closes the form
        assert "✖ Closed" in form.text and runner.calls[-1].text == "3"
    else:
        assert "5/6 · Deadline" in form.text and [c.text for c in runner.calls] == ["deploy"]
