"""A Feishu group thread two people use: one person's open question never blocks the other."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.render import render_notice
from clarigate.adapters.testing import ScriptedRunner, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField

from .cards import button, is_interactive, payload, text_of
from .events import card_action, message_event
from .test_scenarios import agent, ask

GROUP = {"chat": "oc_group", "chat_type": "group"}
BOBS = {"user": "ou_bob", "message_id": "om_root", "mention_bot": True, **GROUP}


def in_thread(text: str, user: str) -> dict:
    """``@bot text`` written by ``user`` in the thread the bot's question started."""
    return message_event(text, user=user, root_id="om_root", mention_bot=True, **GROUP)


async def test_alices_request_runs_her_cancel_is_refused_to_her_and_bobs_click_still_answers(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.contact_scope = True
    bot.api.names.update(ou_alice="Alice Wang", ou_bob="Bob Li")
    question_id, card = await ask(bot, "deploy it", **BOBS)

    await bot.deliver(in_thread("summarize the logs", "ou_alice"))
    await bot.gateway.drain()
    alices = bot.runner.calls[1]  # Alice's request ran on the thread, marked as not Bob's answer
    assert alices.thread_id == bot.runner.calls[0].thread_id and alices.response is None
    assert alices.text.startswith("[From Alice Wang") and "question to Bob Li stays open" in alices.text
    reply = bot.api.posted()[-1]
    assert reply.path == "/open-apis/im/v1/messages/om_root/reply" and reply.body["reply_in_thread"] is True
    shown = text_of(bot.api.shown()[-1])
    assert shown.startswith("You said: [From Alice Wang") and "summarize the logs" in shown
    assert is_interactive(bot.api.cards[question_id])  # Bob's question is still open

    posted = len(bot.api.posted())
    for _ in range(2):
        await bot.deliver(in_thread("/cancel", "ou_alice"))
        await bot.gateway.drain()
    assert bot.api.posted()[posted:] == []  # nothing the group sees
    (note,) = bot.api.ephemeral.values()  # once for this question, not on every /cancel: Alice's alone
    assert (note.chat_id, note.open_id) == ("oc_group", "ou_alice")
    assert text_of(note.card) == (
        "Only Bob Li can cancel this question; it stays open. Your own requests still go ahead."
    )
    assert is_interactive(bot.api.cards[question_id]) and len(bot.runner.calls) == 2

    vue = payload(button(card, "Vue"))
    done = await bot.click(card_action(vue, user="ou_bob", chat="oc_group", message_id=question_id))
    assert "✅ Answered by Bob Li: Vue" in text_of(done["card"]["data"])
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.option_id == "option-2"
    assert bot.runner.calls[-1].thread_id == bot.runner.calls[0].thread_id
    assert "Going with Vue." in text_of(bot.api.shown()[-1])


async def test_alices_click_on_bobs_question_is_still_refused_with_a_toast(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    question_id, card = await ask(bot, "deploy it", **BOBS)
    vue = payload(button(card, "Vue"))
    refused = await bot.click(card_action(vue, user="ou_alice", chat="oc_group", message_id=question_id))
    assert "card" not in refused and refused["toast"]["content"] == "Only ou_bob can answer this question."
    assert is_interactive(bot.api.cards[question_id])


async def test_alices_unfinished_submit_of_bobs_form_is_refused_before_its_fields_are_checked(make_bot):
    # she was sent to tick Bob's required box first, only to be refused once she had
    form = form_request(
        "Release it?",
        [
            FormField(name="agree", label="I read the release notes", type="checkbox", required=True),
            FormField(name="day", label="Release day", type="date", required=True),
        ],
    )
    runner = ScriptedRunner(
        lambda turn: asking(form) if turn.response is None else TurnOutput(replies=["ok"])
    )
    bot = await make_bot(runner)
    question_id, card = await ask(bot, "release 2.0", **BOBS)
    submit = payload(button(card, "Submit"))
    unticked = {"f1": False, "f2": "2024-04-01 +0800"}
    refused = await bot.click(
        card_action(submit, user="ou_alice", chat="oc_group", message_id=question_id, form_value=unticked)
    )
    assert refused["toast"]["content"] == "Only ou_bob can answer this question."
    assert is_interactive(bot.api.cards[question_id]) and runner.calls[-1].response is None
    # Bob's own unfinished submit is still told what is missing
    told = await bot.click(
        card_action(submit, user="ou_bob", chat="oc_group", message_id=question_id, form_value=unticked)
    )
    assert told["toast"] == {"type": "error", "content": "I read the release notes: This field is required"}


@settings(max_examples=200, deadline=None)
@given(text=st.text(), open_id=st.from_regex(r"ou_[A-Za-z0-9]{1,20}", fullmatch=True))
def test_a_note_for_one_member_mentions_that_member_alone(text: str, open_id: str):
    card = render_notice(text, to=open_id)
    content = text_of(card)
    assert content.startswith(f"<at id={open_id}></at> ")
    assert content.count("<at") == 1  # a mention typed into the text stays text
    assert render_notice(text, to="not an open id")["body"] == render_notice(text)["body"]
