"""A conversation several people use: one person's open question never blocks another.

Ann's question stays open while Bob's requests run (and Ann's answer still continues the
thread); an approval or interrupt closes as superseded; a newer question replaces an older
one; Bob's /cancel is refused privately, once per question; his /status and /new work.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AnswerStatus, Conversation, Sender
from clarigate.gateway.flow.answers import from_someone_else
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
APPROVAL = choice_request("Run delete_records?", ["Approve", "Reject"], request_id="approval:int-1")
ROOM = {"chat": "room", "topic": "t", "direct": False}


def script_for(asks: dict[str, object]):
    """A turn whose text ends with a key of ``asks`` asks that request; others say what they read."""

    def script(turn: Turn) -> TurnOutput:
        for word, request in asks.items():
            if turn.response is None and turn.text.endswith(word):
                return asking(request.model_copy(update={"request_id": request.request_id + f"-{word}"}))
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.value}"])
        return TurnOutput(replies=[f"request: {turn.text.splitlines()[-1]}"])

    return script


async def room_with_anns_question(store: Store, make_gateway, request=FRAMEWORK, **asks):
    runner = ScriptedRunner(script_for({"build": request, **asks}))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    return runner, gateway, chat


async def test_bobs_request_runs_on_the_thread_and_anns_answer_still_continues_it(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway)
    anns = chat.last_request()

    await chat.say("summarize the incident", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    assert chat.texts("room")[-1] == "request: summarize the incident"
    assert runner.calls[1].thread_id == runner.calls[0].thread_id and runner.calls[1].response is None
    assert runner.calls[1].text.startswith("[From Bob, another person in this conversation.")
    assert (await gateway.pending_by_token(anns.token)).status == "pending" and chat.closed() == []

    await chat.say("2", user="ann", **ROOM)  # typed: Ann's answer, not a request
    await gateway.drain()
    assert runner.calls[-1].response.option_id == "option-2"
    assert runner.calls[-1].thread_id == runner.calls[0].thread_id
    assert chat.texts("room")[-1] == "answer: Vue"
    assert [c.answered_line for c in chat.closed()] == ["✅ Answered by ann: Vue"]


async def test_anns_click_answers_after_bobs_request(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway)
    await chat.say("what time is it", user="bob", name="Bob", **ROOM)
    await gateway.drain()

    outcome = await chat.click(0, user="ann")
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED
    assert runner.calls[-1].response.value == "React" and chat.texts("room")[-1] == "answer: React"


async def test_a_chinese_request_from_someone_else_is_marked_in_chinese(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway)
    await chat.say("帮我总结一下", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    assert runner.calls[1].text.startswith("[来自本对话中的另一位成员 Bob。")
    assert runner.calls[1].text.endswith("\n\n帮我总结一下")


async def test_an_approval_holds_the_run_so_bobs_request_closes_it_as_superseded(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway, APPROVAL)
    approval = chat.last_request()

    await chat.say("list the tables", user="bob", name="Bob", **ROOM)
    await gateway.drain()

    assert runner.calls[-1].text == "list the tables"  # no note: nothing is left open
    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: Bob sent a new message instead"]
    late = await chat.click(0, user="ann", token=approval.token)
    assert late.message == "This question was closed when Bob sent a new message."
    assert len(runner.calls) == 2


async def test_a_newer_question_replaces_the_one_left_open(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway, deploy=FRAMEWORK)
    anns = chat.last_request()

    await chat.say("deploy", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    bobs = chat.last_request()

    assert bobs.token != anns.token
    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: replaced by a newer question to Bob"]
    late = await chat.click(0, user="ann", token=anns.token)
    assert late.status is AnswerStatus.ALREADY_ANSWERED
    assert late.message == "This question was closed: a newer question to Bob replaced it."
    assert (await chat.click(1, user="bob", token=bobs.token)).status is AnswerStatus.ACCEPTED
    await gateway.drain()
    assert runner.calls[-1].response.value == "Vue" and len(runner.calls) == 3


async def test_bobs_cancel_is_refused_privately_once_per_question(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway, deploy=FRAMEWORK)

    for _ in range(3):
        await chat.say("/cancel@clari_bot", user="bob", name="Bob", **ROOM)
    await gateway.drain()

    notes = [item for _, item in chat.sent if getattr(item, "private_to", None) is not None]
    assert [(n.text, n.private_to) for n in notes] == [
        (
            "Only Ann can cancel this question; it stays open. Your own requests still go ahead.",
            Sender(user_id="bob", display_name="Bob"),
        )
    ]
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"
    assert len(runner.calls) == 1

    # a new question (Bob's own request replaced Ann's; Ann's /cancel of it is noted once again)
    await chat.say("deploy", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    await chat.say("/cancel", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    assert chat.sent[-1][1].text.startswith("Only Bob can cancel this question")
    assert chat.sent[-1][1].private_to == Sender(user_id="ann", display_name="Ann")


async def test_bobs_status_and_help_answer_and_the_question_stays_open(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway)

    await chat.say("/status", user="bob", name="Bob", **ROOM)
    await chat.say("/help", user="bob", name="Bob", **ROOM)
    await gateway.drain()

    status, help_text = chat.texts("room")[-2:]
    assert "• Waiting for Ann to answer “Which framework?”" in status
    assert help_text.startswith("Just write what you need.")
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"
    assert len(runner.calls) == 1


async def test_bobs_new_restarts_the_conversation_for_everyone(store: Store, make_gateway):
    runner, gateway, chat = await room_with_anns_question(store, make_gateway)

    await chat.say("/new", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    await chat.say("hello", user="ann", name="Ann", **ROOM)
    await gateway.drain()

    assert [c.answered_line for c in chat.closed()] == ["✖ Closed: Bob started a new conversation"]
    assert runner.calls[-1].thread_id != runner.calls[0].thread_id
    assert runner.calls[-1].text == "hello"


def record_asked_by(asker: Sender, policy: str = "starter") -> PendingRecord:
    return PendingRecord(
        request=FRAMEWORK,
        token="tok",
        thread_id="th",
        conversation=Conversation(platform="test", chat_id="room", topic="t"),
        asked_by=asker,
        policy=policy,
        created_at=0.0,
        expires_at=1.0,
    )


@settings(max_examples=200, deadline=None)
@given(name=st.text(), asker=st.text(min_size=1), text=st.text())
def test_someone_elses_request_keeps_its_words_after_one_line_saying_who_wrote_it(name, asker, text):
    record = record_asked_by(Sender(user_id="ann", display_name=asker))
    out = from_someone_else(record, Sender(user_id="bob", display_name=name or None), text)
    note = out[: len(out) - len(text) - 2] if text else out
    assert out == (f"{note}\n\n{text}" if text else note)
    assert "\n" not in note and note.startswith("[") and note.endswith("]")
    assert "not its answer" in note or "不是它的答案" in note


@given(text=st.text())
def test_the_askers_own_words_and_an_anyone_thread_are_left_as_they_are(text):
    ann = Sender(user_id="ann", display_name="Ann")
    assert from_someone_else(record_asked_by(ann), ann, text) == text
    assert from_someone_else(record_asked_by(ann, "anyone"), Sender(user_id="bob"), text) == text
