"""Nobody is trapped in a form, and the wizard's details: Cancel, Back/Next/Clear, repeats, old forms."""

from __future__ import annotations

import asyncio
import json

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField

from .harness import (
    ALICE,
    GROUP,
    bot_message,
    callback_update,
    command_update,
    mention_update,
    message_update,
    private_chat,
)
from .test_choices import ask_then_echo, clarification_call
from .test_wizard import FORM, Wizard

SECOND = form_request(
    "Name the project",
    [FormField(name="name", label="Name", type="text", required=True)],
    request_id="clarification:form-2",
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "deploy":
        return asking(FORM)
    if turn.response is None and turn.text == "name it":
        return asking(SECOND)
    if turn.response is None:
        return TurnOutput(replies=[f"You said: {turn.text}"])
    return TurnOutput(replies=[f"Configured: {turn.response.values}"])


class Form:
    """What the form message shows now (the fake's record of it), and taps and typing on it."""

    def __init__(self, tg, message_id: int, thread_id: int | None = None) -> None:
        self.tg = tg
        self.message_id = message_id
        self.thread_id = thread_id  # the topic of Alice's chat it is in (threaded mode), if any
        keyboard = json.loads(tg.api.messages[(ALICE["id"], message_id)][1])
        self.token = keyboard["inline_keyboard"][0][0]["callback_data"].split("|")[0]

    @property
    def text(self) -> str:
        return self.tg.api.messages[(ALICE["id"], self.message_id)][0]

    @property
    def labels(self) -> list[str]:
        markup = self.tg.api.messages[(ALICE["id"], self.message_id)][1]
        return [b["text"] for row in json.loads(markup or "{}").get("inline_keyboard", []) for b in row]

    async def tap(self, action: str) -> dict:
        tap = callback_update(f"{self.token}|{action}", self.message_id, thread_id=self.thread_id)
        await self.tg.deliver(tap)
        return self.tg.api.of("answerCallbackQuery")[-1].params

    async def reply(self, text: str) -> None:
        await self.tg.deliver(
            message_update(text, reply_to=bot_message(self.message_id, private_chat(ALICE)))
        )


async def open_form(bench, until: str = "4/6") -> tuple:
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    form = Form(tg, clarification_call(tg).result["message_id"])
    for action in ("form", "s1", "d", "y"):
        await form.tap(action)
    assert f"{until} · " in form.text
    return tg, runner, form


async def test_cancel_on_every_step_declines_and_frees_the_person(bench):
    tg, runner, form = await open_form(bench)
    assert "✖ Cancel" in form.labels
    accepted, answers = tg.record()
    tg.new_calls()
    notice = await form.tap("x")
    assert [(a.decline, a.token) for a in answers] == [(True, form.token)]
    assert tg.new_calls()[0].method == "answerCallbackQuery"
    if runner.calls[-1].response is None:  # a core that does not take a decline yet refuses it:
        assert notice["show_alert"] == "true"  # the person is told, and the form lets go of them
        assert form.labels == ["📝 Fill in", "✖ Cancel"]
    await tg.deliver(message_update("3"))  # no longer a value: the core has it as a message
    assert [m.text for m in accepted] == ["3"]
    assert "4/6" not in form.text


async def test_in_private_a_message_after_the_agent_said_something_else_is_not_a_value(bench):
    # (the gateway's own lines, /help or /status, do not count: test_form_out_of_turn.py)
    thinking = asyncio.Event()

    async def slow(turn: Turn) -> TurnOutput:
        if turn.text == "deploy":
            await thinking.wait()
        return script(turn)

    runner = ScriptedRunner(slow)
    tg = await bench(runner)
    await tg.post(message_update("deploy"))
    await tg.post(message_update("on staging"))  # written while the agent thinks: answered after the question
    thinking.set()
    await tg.gateway.drain()
    form = Form(tg, clarification_call(tg).result["message_id"])
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("You said:")  # the agent, after it
    for action in ("form", "s1", "d", "y"):
        await form.tap(action)
    await form.reply("3")  # a reply to the form is still a value
    assert "5/6 · Deadline" in form.text
    await tg.deliver(message_update("2026-12-01"))  # not a reply, after the agent said something else:
    await tg.settle()  # a new request, which closes the form (the core's rule for open questions)
    assert "✖ Closed" in form.text
    assert runner.calls[-1].text == "2026-12-01"


async def test_back_then_next_keeps_a_value_and_clear_empties_an_optional_one(bench):
    tg, runner, form = await open_form(bench)
    await tg.deliver(message_update("3"))
    await tg.deliver(message_update("2026-12-01"))
    await tg.deliver(message_update("keep it small"))
    assert "Notes: keep it small" in form.text
    await form.tap("b")
    assert "→ keep it small" in form.text and form.labels[:3] == ["◀ Back", "Next ▶", "⌫ Clear"]
    await form.tap("k")
    assert "Notes: keep it small" in form.text
    await form.tap("b")
    await form.tap("c")
    assert "→" not in form.text and "Skip ▶" in form.labels
    await form.tap("k")
    assert "Notes: —" in form.text


async def test_edit_from_the_summary_keeps_required_text_values(bench):
    tg, runner, form = await open_form(bench)
    await tg.deliver(message_update("3"))
    await tg.deliver(message_update("2026-12-01"))
    await form.tap("k")
    await form.tap("E")
    for _ in range(6):  # Next through every step: nothing needs typing again
        await form.tap("k")
    assert "Replicas: 3" in form.text and "Deadline: 2026-12-01" in form.text
    await form.tap("S")
    assert runner.calls[-1].response.values["replicas"] == 3


async def test_a_repeated_wrong_value_shows_the_reason_again(bench):
    tg, runner, form = await open_form(bench)
    await tg.deliver(message_update("lots"))
    assert "⚠️ Enter a number" in form.text
    await tg.deliver(message_update("lots"))
    assert "⚠️ Enter a number (×2)" in form.text
    await form.tap("d")  # a button of another step changes nothing: "message is not modified" is fine
    assert "(×2)" in form.text


async def test_other_tapped_twice_posts_one_prompt(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the app"))
    other = next(
        b["callback_data"] for row in clarification_call(tg).buttons for b in row if b["text"] == "Other…"
    )
    tg.new_calls()
    await tg.deliver(callback_update(other, 1000))
    await tg.deliver(callback_update(other, 1000))
    calls = tg.new_calls()
    prompts = [c for c in calls if c.method == "sendMessage"]
    assert len(prompts) == 1 and json.loads(prompts[0].params["reply_markup"])["force_reply"] is True
    hints = [c.params["text"] for c in calls if c.method == "answerCallbackQuery"]
    assert hints == ["Type your answer as a reply.", "Type your answer as a reply."]


async def test_a_reply_to_an_older_form_says_it_is_closed(bench):
    tg, runner, first = await open_form(bench)
    await tg.deliver(command_update("/new"))
    await tg.deliver(message_update("name it"))
    asked = [c for c in tg.api.of("sendMessage") if c.markup]
    second = Form(tg, asked[-1].result["message_id"])
    await second.tap("form")
    assert "1/1 · Name" in second.text
    tg.new_calls()
    await first.reply("3")
    note = [c for c in tg.new_calls() if c.method == "sendMessage"]
    assert len(note) == 1 and note[0].params["text"].startswith("That form is closed.")
    assert runner.calls[-1].text == "name it"  # nothing ran, no value taken
    await tg.deliver(message_update("Apollo"))  # the open form still takes its values: the note
    assert "Name: Apollo" in second.text  # is the gateway's, it does not take the form's place
    assert "Please check your answers:" in second.text and runner.calls[-1].text == "name it"


async def test_cancel_command_closes_the_form_and_reaches_the_core(bench):
    tg, runner, form = await open_form(bench)
    accepted, _ = tg.record()
    await tg.deliver(command_update("/cancel@clari_bot"))
    assert [m.text for m in accepted] == ["/cancel"]
    assert "4/6" not in form.text
    await tg.deliver(message_update("3"))  # no longer a value
    assert [m.text for m in accepted] == ["/cancel", "3"]


async def submit(form: Form) -> None:
    """Fill in the rest of ``open_form``'s form (from step 4) and submit it."""
    await form.reply("3")
    await form.reply("2026-12-01")
    await form.tap("k")
    await form.tap("S")


async def test_a_reply_to_an_answered_form_is_a_message_of_its_own(bench):
    tg, runner, form = await open_form(bench)
    await submit(form)
    assert runner.calls[-1].response is not None and "✅ Answered" in form.text
    tg.new_calls()
    await form.reply("and staging too, please")  # carrying on, as with a reply to any bot message
    await tg.settle()
    assert runner.calls[-1].text == "and staging too, please"
    notes = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
    assert not any(n.startswith("That form is closed") for n in notes), notes


async def test_a_photo_while_the_form_is_open_reaches_the_agent(bench):
    tg, runner, form = await open_form(bench)
    photo = [{"file_id": "p1", "file_unique_id": "up1", "width": 800, "height": 800, "file_size": 80_000}]
    await tg.deliver(message_update(None, photo=photo))  # no step takes a photo as its value
    await tg.settle()
    assert "photo.jpg" in runner.calls[-1].text  # the agent has it, as any photo
    assert "✖ Closed" in form.text and "Init git" not in form.text  # the core's rule for open questions


async def test_new_or_cancel_in_another_topic_leaves_the_form_of_this_one(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy", thread_id=77))
    asked = next(c for c in tg.api.of("sendMessage") if c.markup)
    message_id = asked.result["message_id"]
    token = asked.buttons[0][0]["callback_data"].split("|")[0]
    for action in ("form", "s1", "d", "y"):
        await tg.deliver(callback_update(f"{token}|{action}", message_id, chat=GROUP, thread_id=77))
    assert "4/6 · Replicas" in tg.api.shown(GROUP["id"], message_id)

    for command in ("/new@clari_bot", "/cancel@clari_bot"):  # said in topic 88, about topic 88
        await tg.deliver(command_update(command, chat=GROUP, thread_id=88))
        await tg.settle()
        assert "4/6 · Replicas" in tg.api.shown(GROUP["id"], message_id)

    reply_to = bot_message(message_id, GROUP)
    await tg.deliver(message_update("3", chat=GROUP, thread_id=77, reply_to=reply_to))
    assert "5/6 · Deadline" in tg.api.shown(GROUP["id"], message_id)  # her values still go in
    await tg.deliver(command_update("/cancel@clari_bot", chat=GROUP, thread_id=77))  # in its own topic
    await tg.settle()
    assert "5/6" not in tg.api.shown(GROUP["id"], message_id)
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"


async def test_typed_choices_of_a_multi_select_step_come_in_the_options_order_as_taps_do(bench):
    # tapping Queue then Auth gives ["Auth", "Queue"]; typing them in that order did not
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    await w.tap("form")
    await w.tap("s1")
    await w.type("queue, auth")
    assert "3/6 · Init git" in w.shown.params["text"]
    for step in (lambda: w.tap("n"), lambda: w.type("2"), lambda: w.type("2026-12-01"), lambda: w.tap("k")):
        await step()
    assert "Features: Auth, Queue" in w.shown.params["text"]  # the summary
    await w.tap("S")
    assert runner.calls[-1].response.values["features"] == ["Auth", "Queue"]


async def test_cancel_with_a_form_open_edits_its_message_once_to_closed(bench):
    tg, runner, form = await open_form(bench)
    tg.new_calls()
    await tg.deliver(command_update("/cancel"))
    await tg.settle()
    edits = [c for c in tg.new_calls() if c.method == "editMessageText"]
    assert [c.params["message_id"] for c in edits] == [str(form.message_id)], edits  # no flicker
    assert "✖ Cancelled by Alice" in edits[0].params["text"] and "✖ Cancelled by Alice" in form.text
    assert form.labels == []  # no buttons left on it


async def test_new_with_a_form_open_shows_the_question_then_closes_it(bench):
    """``/new`` may wait behind a run in the thread: the form shows the question at once (never a
    form that takes no values), then its closing."""
    tg, runner, form = await open_form(bench)
    tg.new_calls()
    await tg.deliver(command_update("/new"))
    await tg.settle()
    edits = [c for c in tg.new_calls() if c.method == "editMessageText"]
    assert [c.params["message_id"] for c in edits] == [str(form.message_id)] * 2, edits
    assert "✖ Closed: Alice started a new conversation" in form.text
    assert form.labels == []
