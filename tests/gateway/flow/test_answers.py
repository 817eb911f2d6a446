"""Answers to clarifications: clicks, forms, typed replies; who may answer; expiry; exactly once."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import AnsweredBy, FormField, Option, answer_declined
from clarigate.gateway.boundary.messages import AnswerStatus, Conversation, PendingView, Sender
from clarigate.gateway.flow.answers import already_answered_outcome
from clarigate.gateway.store.base import Store

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
DEPLOY_FORM = form_request(
    "Deployment details?",
    [
        FormField(
            name="env",
            label="Environment",
            type="select",
            required=True,
            options=[
                Option(id="env-option-1", label="staging", value="staging"),
                Option(id="env-option-2", label="prod", value="prod"),
            ],
        ),
        FormField(name="replicas", label="Replicas", type="number", required=True),
    ],
)


def ask_then_echo(request):
    """First turn asks ``request``; later turns echo, showing the structured answer."""

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("build"):
            return asking(request)
        summary = turn.response.value if turn.response else turn.text
        return TurnOutput(replies=[f"ok: {summary}"])

    return script


async def test_click_answers_and_runs_once_on_the_same_thread(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build me an app", name="Ann")
    await gateway.drain()
    out = chat.last_request()
    assert out.request.question == "Which framework?" and len(out.token) >= 10

    outcome = await chat.click(1)
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED
    assert outcome.answered_line == "✅ Answered by u1: Vue"
    assert [c.text for c in runner.calls][1].endswith("Vue")
    assert runner.calls[1].response.option_id == "option-2"
    assert runner.calls[0].thread_id == runner.calls[1].thread_id
    assert chat.texts()[-1] == "ok: Vue"
    view = await gateway.pending_by_token(out.token)
    assert view.status == "answered" and view.answered_by.user_id == "u1"


async def test_double_click_and_concurrent_claims_give_one_run(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("build it")
    await gateway.drain()

    replay = await asyncio.gather(chat.click(0, event_id="same"), chat.click(0, event_id="same"))
    racing = await asyncio.gather(*(chat.click(i % 2, user=f"u{i}") for i in range(6)))
    await gateway.drain()

    statuses = sorted(o.status.value for o in [*replay, *racing])
    assert statuses.count("accepted") == 1
    assert statuses.count("duplicate") == 1
    assert statuses.count("already_answered") == 6
    loser = next(o for o in racing if o.status is AnswerStatus.ALREADY_ANSWERED)
    assert loser.message.startswith("Already answered by ")
    assert len(runner.calls) == 2  # the question, then exactly one answer run


async def test_wrong_user_is_refused_and_the_request_stays_open(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build it", user="ann", name="Ann", chat="room", direct=False, topic="t")
    await gateway.drain()

    refused = await chat.click(0, user="bob")
    assert (
        refused.status is AnswerStatus.NOT_ALLOWED and refused.message == "Only Ann can answer this question."
    )
    view = await gateway.pending_by_token(chat.last_request().token)
    assert await gateway.may_answer(view, Sender(user_id="bob")) is not None
    assert await gateway.may_answer(view, Sender(user_id="ann")) is None

    accepted = await chat.click(0, user="ann")
    await gateway.drain()
    assert accepted.status is AnswerStatus.ACCEPTED
    assert len(runner.calls) == 2


async def test_expired_and_unknown_tokens_say_so(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner, pending_ttl_seconds=1)
    await chat.say("build it")
    await gateway.drain()

    unknown = await chat.click(0, token="no-such-token-xyz")
    assert unknown.status is AnswerStatus.EXPIRED
    assert unknown.message == "This question has expired; send your request again."

    await asyncio.sleep(1.1)
    expired = await chat.click(0)
    await gateway.drain()
    assert expired.status is AnswerStatus.EXPIRED
    assert len(runner.calls) == 1


async def test_form_submit_with_errors_keeps_the_request_open(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(DEPLOY_FORM))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build and deploy")
    await gateway.drain()

    invalid = await chat.submit({"env": "staging", "replicas": "many"})
    assert invalid.status is AnswerStatus.INVALID and set(invalid.errors) == {"replicas"}
    ok = await chat.submit({"env": "prod", "replicas": "3"})
    await gateway.drain()

    assert ok.status is AnswerStatus.ACCEPTED
    assert runner.calls[-1].response.values == {"env": "prod", "replicas": 3}


async def test_typed_reply_answers_the_pending_question(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build it")
    await gateway.drain()

    await chat.reply("2")
    await gateway.drain()

    assert runner.calls[-1].response.option_id == "option-2"
    closed = chat.closed()
    assert len(closed) == 1 and closed[0].answered_line == "✅ Answered by u1: Vue"
    assert chat.texts()[-1] == "ok: Vue"
    await chat.reply("and now something else")
    await gateway.drain()
    assert runner.calls[-1].response is None  # nothing pending any more: an ordinary message


async def test_partial_typed_form_says_what_is_missing(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(DEPLOY_FORM))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build and deploy")
    await gateway.drain()

    await chat.reply("env: staging")
    await gateway.drain()
    assert len(runner.calls) == 1
    assert "Replicas" in chat.texts()[-1]

    await chat.reply("env: staging\nreplicas: 2")
    await gateway.drain()
    assert runner.calls[-1].response.values == {"env": "staging", "replicas": 2}


async def test_a_message_written_before_the_question_was_asked_is_not_taken_as_its_answer(
    store: Store, make_gateway
):
    first_run_started = asyncio.Event()
    second_message_in = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "build me an app":
            first_run_started.set()
            await second_message_in.wait()  # the person goes on typing while the agent thinks
            return asking(FRAMEWORK)
        summary = turn.response.value if turn.response else f"more context: {turn.text}"
        return TurnOutput(replies=[summary])

    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build me an app")
    await asyncio.wait_for(first_run_started.wait(), 5)
    await chat.say("it is for my shop")  # written before the question existed
    second_message_in.set()
    await gateway.drain()

    assert runner.calls[1].response is None and chat.texts()[-1] == "more context: it is for my shop"
    assert chat.closed() == []
    assert (await chat.click(1)).status is AnswerStatus.ACCEPTED  # the question is still open
    await gateway.drain()
    assert runner.calls[-1].response.value == "Vue"


async def test_someone_else_typing_an_option_in_the_thread_is_never_taken_as_the_answer(
    store: Store, make_gateway
):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build it", user="ann", name="Ann", chat="room", direct=False, topic="t")
    await gateway.drain()

    await chat.say("vue", user="bob", name="Bob", chat="room", direct=False, topic="t")
    await gateway.drain()

    bobs = runner.calls[1]  # Bob's words ran as his own request, marked as not Ann's answer
    assert bobs.response is None and bobs.text.endswith("\n\nvue")
    assert "From Bob" in bobs.text and "question to Ann stays open" in bobs.text
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view.status == "pending" and chat.closed() == []
    await chat.say("2", user="ann", chat="room", direct=False, topic="t")
    await gateway.drain()
    assert runner.calls[-1].response.option_id == "option-2"


async def test_form_values_for_a_question_without_a_form_are_refused(store: Store, make_gateway):
    runner = ScriptedRunner(ask_then_echo(FRAMEWORK))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build it")
    await gateway.drain()

    forged = await chat.submit({})
    await gateway.drain()

    assert forged.status is AnswerStatus.INVALID
    assert len(runner.calls) == 1
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"


async def test_working_indicator_follows_the_language_the_person_wrote_in(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner())
    await chat.say("帮我部署文档")
    await chat.say("deploy the docs", chat="c2")
    await gateway.drain()

    started = {
        conv.chat_id: item.locale
        for conv, item in chat.sent
        if item.kind == "progress" and item.state == "started"
    }
    assert started == {"c1": "zh", "c2": "en"}


def test_a_closed_question_whose_record_names_nobody_is_told_in_the_askers_language():
    """A malformed record (answered, but by no one on record) still gets a whole sentence in the
    question's language, with no English word standing in for the person."""
    asked = choice_request("Which region?", ["eu", "us"]).model_copy(update={"locale": "zh"})
    by = AnsweredBy(platform="test", user_id="ann")
    for response in (None, answer_declined(asked, by, reason="cancelled")):
        chat = Conversation(platform="test", chat_id="c")
        view = PendingView(request=asked, token="t", conversation=chat, status="answered", response=response)
        outcome = already_answered_outcome(view)
        assert outcome.status is AnswerStatus.ALREADY_ANSWERED
        assert outcome.message == "这个问题已经关闭了。"
