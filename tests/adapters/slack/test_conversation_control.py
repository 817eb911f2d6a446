"""``/clarigate new|cancel|help|status`` and the Cancel button: what the core receives, what people see.

The core handles the neutral commands and a declining answer; these tests hold the
adapter to its side: the command text and the ``decline`` flag the core gets, and a
Cancel on every question Slack shows.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.adapters.slack.render import render_clarification
from clarigate.adapters.slack.respond import may_respond
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.protocol import FormField, HumanInputRequest, Option
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerOutcome, InboundAnswer, InboundMessage
from clarigate.gateway.boundary.outbound_items import ClarificationOut

from ...gateway.jobs.crash import eventually
from .conftest import MakeWorld, SlackWorld
from .fake_slack import TEAM_ID


def spy_on_core(world: SlackWorld) -> tuple[list[InboundMessage], list[InboundAnswer]]:
    """Record every message and answer the adapter hands to the core (which still handles them)."""
    messages: list[InboundMessage] = []
    answers: list[InboundAnswer] = []
    accept, submit = world.gateway.accept, world.gateway.submit_answer

    async def accepting(message: InboundMessage) -> AcceptOutcome:
        messages.append(message)
        return await accept(message)

    async def submitting(answer: InboundAnswer) -> AnswerOutcome:
        answers.append(answer)
        return await submit(answer)

    world.gateway.accept = accepting  # type: ignore[method-assign]
    world.gateway.submit_answer = submitting  # type: ignore[method-assign]
    return messages, answers


@pytest.mark.parametrize(
    ("typed", "neutral"),
    [
        ("new", "/new"),
        ("cancel", "/cancel"),
        ("HELP", "/help"),
        ("status", "/status"),
        ("", "/help"),
        ("launch the rockets", "/help"),
        ("new a fresh start", "/new a fresh start"),
    ],
)
async def test_the_slash_command_reaches_the_core_as_the_neutral_command(
    make_world: MakeWorld, typed: str, neutral: str
):
    world = await make_world(ScriptedRunner())
    messages, _ = spy_on_core(world)
    response = await world.user.slash_command(typed, user="U7", channel="D7")
    assert response.status_code == 200 and not response.content  # acked at once, nothing public
    [message] = messages
    assert message.text == neutral
    assert (message.sender.user_id, message.conversation.chat_id) == ("U7", "D7")
    assert message.conversation.is_direct and message.conversation.topic is None


async def test_a_command_in_a_dm_speaks_to_the_dms_conversation(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    messages, _ = spy_on_core(world)
    await world.user.dm("remember this")
    await world.user.slash_command("status")
    await world.settle()
    dm, command = (m.conversation for m in messages)
    assert command.thread_key == dm.thread_key


async def test_a_command_in_a_channel_privately_says_to_use_the_thread(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    messages, _ = spy_on_core(world)
    answer = await world.user.slash_hint("cancel", channel="C5")
    assert answer["response_type"] == "ephemeral"  # shown to the person who typed it only
    hint = answer["text"]
    assert "<@U0BOT> cancel" in hint
    assert hint.endswith(" Every question also has its own Cancel button.")  # approvals too
    assert messages == []  # which thread was meant is unknown: nothing reaches the core


@pytest.mark.parametrize(
    ("typed", "neutral"), [("cancel", "/cancel"), ("New", "/new"), ("status", "/status")]
)
async def test_a_mention_with_a_command_in_a_thread_is_that_threads_command(
    make_world: MakeWorld, typed: str, neutral: str
):
    world = await make_world(ScriptedRunner())
    messages, _ = spy_on_core(world)
    _, ts = await world.user.mention("build me a thing")
    await world.user.mention(typed, thread_ts=ts)
    await world.user.mention("cancel the deploy", thread_ts=ts)  # more than the command: a request
    await world.settle()
    assert [m.text for m in messages] == ["build me a thing", neutral, "cancel the deploy"]
    assert messages[1].conversation.thread_key == messages[0].conversation.thread_key


async def test_slash_new_starts_a_new_thread(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("first")
    await world.settle()
    await world.user.slash_command("new")
    await world.settle()
    await world.user.dm("second")
    await world.settle()
    assert [c.text for c in runner.calls] == ["first", "second"]
    assert runner.calls[0].thread_id != runner.calls[1].thread_id


async def test_a_replayed_command_is_a_duplicate_for_the_core(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    outcomes: list[AcceptOutcome] = []
    accept = world.gateway.accept

    async def accepting(message: InboundMessage) -> AcceptOutcome:
        outcomes.append(await accept(message))
        return outcomes[-1]

    world.gateway.accept = accepting  # type: ignore[method-assign]
    first = await world.user.slash_command("status", trigger_id="42.1.abc")
    again = await world.user.slash_command("status", trigger_id="42.1.abc")  # Slack retried it
    await world.settle()
    assert [first.status_code, again.status_code] == [200, 200]
    assert outcomes == [AcceptOutcome.ACCEPTED, AcceptOutcome.DUPLICATE]


def asks(request: HumanInputRequest):
    """A script that asks ``request`` first, then echoes."""

    def script(turn: Turn):
        if turn.response is None:
            return asking(request)
        return ScriptedRunner().script(turn)

    return script


async def test_cancel_on_a_question_submits_a_decline_from_the_clicker(make_world: MakeWorld):
    runner = ScriptedRunner(asks(choice_request("Which framework?", ["React", "Vue"])))
    world = await make_world(runner)
    _, answers = spy_on_core(world)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()

    response = await world.user.click(question, "clarigate:decline")
    await world.settle()

    assert response.status_code == 200
    [answer] = answers
    assert answer.decline and answer.sender.user_id == "U1"
    assert answer.option_id is None and answer.text is None and answer.values is None
    assert answer.token and answer.token in question["blocks"][-1]["elements"][-1]["value"]


async def test_cancel_closes_the_question_for_everyone_and_tells_the_agent(make_world: MakeWorld):
    runner = ScriptedRunner(asks(choice_request("Which framework?", ["React", "Vue"])))
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()

    await world.user.click(question, "clarigate:decline")
    await world.settle()
    update = world.fake.edits(question["ts"])[-1]
    assert not [b for b in update["blocks"] if b["type"] == "actions"]  # no control left to click
    assert "✖ Cancelled by <@U1>" in json.dumps(update["blocks"], ensure_ascii=False)
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"

    again = await world.user.click(question, "clarigate:o1")  # a late click changes nothing
    await world.settle()
    assert again.status_code == 200 and len(runner.calls) == 2


async def test_help_spells_the_slash_command(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.slash_command("help")
    await world.settle()
    assert "/clarigate cancel" in json.dumps(world.fake.of("chat.postMessage"), ensure_ascii=False)


def _request(kind: str) -> HumanInputRequest:
    options = [Option(id=f"option-{i}", label=f"Choice {i}", value=f"c{i}") for i in range(1, 9)]
    base: dict[str, Any] = {"request_id": "r", "tool_call_id": "t", "question": "Which?"}
    if kind == "free_text":
        return HumanInputRequest(**base, input_mode="free_text")
    if kind == "buttons":
        return HumanInputRequest(**base, input_mode="choice_with_other", options=options[:3])
    if kind == "select":
        return HumanInputRequest(**base, input_mode="choice_with_other", options=options)
    if kind == "risk":
        risky = [
            Option(id="option-1", label="Delete", value="d"),
            Option(id="option-2", label="Cancel", value="c"),
        ]
        return HumanInputRequest(
            **base, clarification_type="risk_confirmation", input_mode="choice_with_other", options=risky
        )
    if kind == "too_many":
        many = [Option(id=f"option-{i}", label=f"C{i}", value=f"c{i}") for i in range(1, 102)]
        return HumanInputRequest(**base, input_mode="choice_with_other", options=many)
    return form_request("Which?", [FormField(name="name", label="Name")])


@pytest.mark.parametrize("kind", ["free_text", "buttons", "select", "risk", "too_many", "form"])
def test_every_question_carries_a_way_to_dismiss_it(kind: str):
    out = ClarificationOut(request=_request(kind), fallback_text="Which?", token="tok")
    blocks = render_clarification(out)
    declines = [e for b in blocks for e in b.get("elements", []) if e.get("action_id") == "clarigate:decline"]
    assert [d["value"] for d in declines] == ["tok|decline"]
    # a risk confirmation already has an option called Cancel: the way out is then called Skip
    assert declines[0]["text"]["text"] == ("Skip" if kind == "risk" else "Cancel")


async def test_a_cancel_on_a_form_question_is_a_decline_too(make_world: MakeWorld):
    runner = ScriptedRunner(asks(form_request("Deploy where?", [FormField(name="env", label="Env")])))
    world = await make_world(runner)
    _, answers = spy_on_core(world)
    await world.user.dm("deploy")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:decline", user="U1")
    await world.settle()
    assert [a.decline for a in answers] == [True]


async def test_help_after_a_chinese_message_answers_in_chinese_with_the_shared_words(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.slash_command("help")
    await world.settle()
    english = world.fake.posted()["text"]
    assert (
        "/clarigate cancel — dismiss the open question, or stop the request in progress"
        in english.splitlines()
    )
    await world.user.dm("帮我写一份周报")
    await world.settle()
    await world.user.slash_command("help")
    await world.settle()
    chinese = world.fake.posted()["text"]
    assert chinese.startswith("直接告诉我您需要什么。")
    assert "/clarigate cancel — 取消待回答的问题，或停止进行中的请求" in chinese.splitlines()


async def test_the_in_channel_hint_speaks_the_language_typed(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    response = await world.user.slash_command("取消", channel="C5")
    hint = response.json()["text"]
    assert hint.startswith("在频道中，请在对话的话题里给我发消息：<@U0BOT> new")
    assert hint.endswith("每个问题也都有自己的「取消」按钮。")  # every question


async def test_a_command_in_someone_elses_dm_is_answered_through_its_response_url(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.outside.add("D0THEIRS")  # a DM between U1 and U2: the bot is no member
    hook = world.fake.response_url("1")
    response = await world.user.slash_command("status", channel="D0THEIRS", response_url=hook)
    await world.settle()

    assert response.status_code == 200
    refused = [c.answer.get("error") for c in world.fake.attempts("chat.postMessage")]
    assert refused == ["channel_not_found"]  # tried once, not retried, not abandoned
    assert len(world.fake.responses) == 1
    answer = world.fake.responses[0]
    assert answer["response_type"] == "ephemeral"  # for the person who typed it only
    assert answer["text"].startswith("Where this conversation stands:")
    assert "No open question." in answer["text"]


async def test_two_people_of_a_dm_typing_commands_at_once_each_get_their_own_answer(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.outside.add("D0THEIRS")  # a DM between U1 and U2: the bot is no member
    posting = world.fake.hold("chat.postMessage")
    one, two = world.fake.response_url("1"), world.fake.response_url("2")
    await world.user.slash_command("status", user="U1", channel="D0THEIRS", response_url=one)
    await eventually(lambda: world.fake.arrived("chat.postMessage") == 1)  # U1's answer under way
    await world.user.slash_command("help", user="U2", channel="D0THEIRS", response_url=two)
    posting.set()
    await world.settle()

    answered = world.fake.responded
    assert len(answered[f"{TEAM_ID}/1/x"]) == 1  # U1's /status, seen by U1 only
    assert answered[f"{TEAM_ID}/1/x"][0].startswith("Where this conversation stands:")
    assert len(answered[f"{TEAM_ID}/2/x"]) == 1  # U2's /help, seen by U2 only
    assert "Where this conversation stands" not in answered[f"{TEAM_ID}/2/x"][0]


async def test_a_command_in_the_bots_own_dm_is_still_posted(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.slash_command("help", response_url=world.fake.response_url("2"))
    await world.settle()
    assert world.fake.of("chat.postMessage") and world.fake.responses == []


def test_only_slacks_own_hooks_are_answered_through():
    api = "http://127.0.0.1:8123/api/"
    assert may_respond("https://hooks.slack.com/commands/T0TEAM/1/x", api)
    assert may_respond("http://127.0.0.1:8123/commands/T0TEAM/1/x", api)  # the API's own host
    assert not may_respond("http://hooks.slack.com/commands/T0TEAM/1/x", api)
    assert not may_respond("https://hooks.slack.com.example.net/commands/x", api)
    assert not may_respond("https://example.net/commands/x", api)
