"""A typed answer that names a member (``@carol``) is an answer, not talk to Carol.

In a group a reply to the bot that @-mentions someone but not the bot is said to them and is
ignored (``test_mentions_of_others``). A reply that answers its writer's open question is the
exception: to "Who should review the release?", after "Other…" ("Type your answer as a reply."),
or as a text step of their form, "@carol" is the answer, as if it named no one.
"""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, Option

from .harness import BOB, GROUP, bot_message, callback_update, mention_update, message_update
from .test_choices import ask_then_echo

WHO_REVIEWS = HumanInputRequest(
    request_id="clarification:free-1",
    tool_call_id="free-1",
    question="Who should review the release?",
    input_mode="free_text",
)
AT_CAROL = [{"type": "mention", "offset": 0, "length": 6}]
CAROL = {"id": 333, "is_bot": False, "first_name": "Carol"}


async def bobs_question(bench, request: HumanInputRequest):
    """Bob asks the bot in the group; it asks ``request``: the bench and the question's message."""
    runner = ScriptedRunner(ask_then_echo(request))
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy", BOB))
    return tg, tg.api.of("sendMessage")[-1]


async def status_of(tg, request_id: str) -> str:
    record = await tg.gateway.store.get_pending(request_id)
    return record.status


async def test_a_typed_answer_naming_a_member_answers_the_free_text_question(bench):
    tg, asked = await bobs_question(bench, WHO_REVIEWS)
    assert "Type your answer as a reply." in asked.params["text"]
    question = bot_message(asked.result["message_id"], GROUP)

    # Bob does what the question says: he replies to it with the reviewer's username
    await tg.deliver(message_update("@carol", BOB, GROUP, reply_to=question, entities=AT_CAROL))
    await tg.settle()

    assert [c.response.value for c in tg.runner.calls if c.response] == ["@carol"]
    said = tg.api.of("sendMessage")[-1].params["text"]  # the agent's reply (the name not linked)
    assert said.startswith("Going with <b>@") and said.endswith("carol</b>.")
    assert await status_of(tg, WHO_REVIEWS.request_id) == "answered"


async def test_an_answer_naming_a_member_by_link_in_a_sentence_is_the_answer(bench):
    tg, asked = await bobs_question(bench, WHO_REVIEWS)
    question = bot_message(asked.result["message_id"], GROUP)

    by_link = [{"type": "text_mention", "offset": 4, "length": 5, "user": CAROL}]
    await tg.deliver(message_update("ask Carol to review", BOB, GROUP, reply_to=question, entities=by_link))
    await tg.settle()

    assert [c.response.value for c in tg.runner.calls if c.response] == ["ask Carol to review"]
    assert await status_of(tg, WHO_REVIEWS.request_id) == "answered"


async def test_a_reply_to_the_other_prompt_naming_a_member_is_the_answer(bench):
    tg, asked = await bobs_question(bench, choice_request("Who reviews?", ["Alice", "Bob"]))
    other = next(
        b["callback_data"] for row in asked.buttons for b in row if b["callback_data"].endswith("|other")
    )
    await tg.deliver(callback_update(other, asked.result["message_id"], BOB, GROUP))
    await tg.settle()
    prompt = tg.api.of("sendMessage")[-1]
    assert prompt.params["text"].endswith("Type your answer as a reply.")

    to_prompt = bot_message(prompt.result["message_id"], GROUP)
    await tg.deliver(message_update("@carol", BOB, GROUP, reply_to=to_prompt, entities=AT_CAROL))
    await tg.settle()

    assert [c.response.value for c in tg.runner.calls if c.response] == ["@carol"]
    assert "✅ Answered by Bob" in (tg.api.shown(GROUP["id"], asked.result["message_id"]) or "")


async def test_talk_to_a_member_over_the_askers_choice_stays_ignored(bench):
    request = choice_request("Which framework?", ["React", "Vue"])
    tg, asked = await bobs_question(bench, request)
    question = bot_message(asked.result["message_id"], GROUP)
    sent = len(tg.api.calls)

    words = "@carol can you check the backups?"
    await tg.deliver(message_update(words, BOB, GROUP, reply_to=question, entities=AT_CAROL))
    await tg.settle()

    assert len(tg.runner.calls) == 1 and tg.api.calls[sent:] == []  # no run, not a word, no edit
    assert await status_of(tg, request.request_id) == "pending"


REVIEW = form_request(
    "Plan the release",
    [
        FormField(name="reviewer", label="Reviewer", type="text", required=True),
        FormField(
            name="when",
            label="When",
            type="select",
            required=True,
            options=[Option(id=f"when-{i}", label=w, value=w) for i, w in enumerate(("Today", "Friday"), 1)],
        ),
    ],
    request_id="clarification:review-1",
)


def plans(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(REVIEW)
    return TurnOutput(replies=[f"Planned: {turn.response.values}"])


async def test_a_forms_text_step_takes_a_reply_naming_a_member(bench):
    tg = await bench(ScriptedRunner(plans))
    await tg.deliver(mention_update("release", BOB))
    form_id = tg.api.of("sendMessage")[-1].result["message_id"]
    token = tg.api.of("sendMessage")[-1].buttons[0][0]["callback_data"].split("|")[0]
    await tg.deliver(callback_update(f"{token}|form", form_id, BOB, GROUP))
    await tg.settle()
    assert "1/2 · Reviewer" in tg.api.of("editMessageText")[-1].params["text"]
    form = bot_message(form_id, GROUP)

    await tg.deliver(message_update("@carol", BOB, GROUP, reply_to=form, entities=AT_CAROL))
    await tg.settle()
    assert "2/2 · When" in tg.api.of("editMessageText")[-1].params["text"]

    # on the choice step, talk to Carol is no value: the step stays, nothing said or run
    edits, sends = len(tg.api.of("editMessageText")), len(tg.api.of("sendMessage"))
    words = "@carol today or friday?"
    await tg.deliver(message_update(words, BOB, GROUP, reply_to=form, entities=AT_CAROL))
    await tg.settle()
    assert (len(tg.api.of("editMessageText")), len(tg.api.of("sendMessage"))) == (edits, sends)
    assert "⚠️" not in tg.api.of("editMessageText")[-1].params["text"]

    await tg.deliver(callback_update(f"{token}|s2", form_id, BOB, GROUP))
    await tg.deliver(callback_update(f"{token}|S", form_id, BOB, GROUP))
    await tg.settle()
    answered = [c.response.values for c in tg.runner.calls if c.response]
    assert answered == [{"reviewer": "@carol", "when": "Friday"}]
    assert await status_of(tg, REVIEW.request_id) == "answered"
