"""``/cancel`` in a shared conversation while someone else's question is open (``answer_policy``
``starter``): the question is not the sender's to close, but their own run still is theirs to stop."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Sender
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.store.base import Store

ROOM = {"chat": "room", "topic": "t", "direct": False}
DEPLOY = choice_request("Deploy where?", ["Staging", "Production"])
STOPPED = "■ Stopped. What was already done stays done."
REFUSED = "Only Ann can cancel this question; it stays open. Your own requests still go ahead."
BOB = Sender(user_id="bob", display_name="Bob")


def _script(started: asyncio.Event, reached: list[str]):
    async def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.endswith("deploy"):
            return asking(DEPLOY)
        if turn.response is None and turn.text.endswith("a long task"):
            started.set()
            await asyncio.sleep(3)
            reached.append(turn.text)  # past the stop point: never when stopped
        return TurnOutput(replies=[f"done: {turn.text.splitlines()[-1]}"])

    return script


async def _room_with_anns_question(store: Store, make_gateway):
    started, reached = asyncio.Event(), []
    gateway, chat = await make_gateway(store, ScriptedRunner(_script(started, reached)))
    await chat.say("deploy", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    return started, reached, gateway, chat


def _notes(chat) -> list[TextReply]:
    return [item for _, item in chat.sent if getattr(item, "private_to", None) is not None]


async def test_bobs_cancel_stops_his_own_run_while_anns_question_stays_open(store: Store, make_gateway):
    started, reached, gateway, chat = await _room_with_anns_question(store, make_gateway)
    anns = chat.last_request()
    await chat.say("a long task", user="bob", name="Bob", **ROOM)
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await asyncio.wait_for(gateway.drain(), 10)

    assert reached == []  # his run was stopped
    assert chat.texts("room")[-1] == STOPPED
    assert _notes(chat) == []  # the stopped line, not the question's refusal
    assert (await gateway.pending_by_token(anns.token)).status == "pending" and chat.closed() == []


async def test_bobs_cancel_with_nothing_of_his_running_is_refused_privately(store: Store, make_gateway):
    started, reached, gateway, chat = await _room_with_anns_question(store, make_gateway)
    anns = chat.last_request()

    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await gateway.drain()

    assert [(n.text, n.private_to) for n in _notes(chat)] == [(REFUSED, BOB)]
    assert STOPPED not in chat.texts("room")
    assert (await gateway.pending_by_token(anns.token)).status == "pending" and chat.closed() == []


async def test_bobs_cancel_withdraws_his_waiting_message_behind_carols_run(store: Store, make_gateway):
    started, reached, gateway, chat = await _room_with_anns_question(store, make_gateway)
    anns = chat.last_request()
    await chat.say("a long task", user="carol", name="Carol", **ROOM)
    await asyncio.wait_for(started.wait(), 5)
    await chat.say("what time is it", user="bob", name="Bob", **ROOM)  # waits behind Carol's run

    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await asyncio.wait_for(gateway.drain(), 10)

    assert "✖ Withdrawn: your waiting message “what time is it” will not be answered." in chat.texts("room")
    assert not any(t.startswith("done: what time") for t in chat.texts("room"))
    assert reached != [] and _notes(chat) == []  # Carol's run went on; no refusal for Bob
    assert (await gateway.pending_by_token(anns.token)).status == "pending"


BOTH_REFUSED = (
    "Only Ann can cancel this question, and only Carol can stop the request in progress; both go on. "
    "Your own requests still go ahead."
)
RUN_REFUSED = "Only Carol can stop the request in progress; it goes on. Your own requests still go ahead."


async def test_bobs_cancel_beside_anns_question_and_carols_run_is_told_both_once(store: Store, make_gateway):
    """Neither the question nor the run is Bob's: one private note says both, and his next
    ``/cancel`` (the question closed meanwhile) repeats neither."""
    started, reached, gateway, chat = await _room_with_anns_question(store, make_gateway)
    await chat.say("a long task", user="carol", name="Carol", **ROOM)
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await chat.say("/cancel", user="ann", name="Ann", **ROOM)  # her question closes; Carol's run goes on
    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await asyncio.wait_for(gateway.drain(), 10)

    assert [(n.text, n.private_to) for n in _notes(chat)] == [(BOTH_REFUSED, BOB)]
    assert len(reached) == 1 and STOPPED not in chat.texts("room")  # Carol's run went on


async def test_bob_told_of_anns_question_is_told_of_carols_run_when_it_comes(store: Store, make_gateway):
    """Bob was told already that Ann's question is not his; Carol's run starts, and his next
    ``/cancel`` tells him it is not his to stop either (the notes are said once each, apart)."""
    started, reached, gateway, chat = await _room_with_anns_question(store, make_gateway)
    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    await chat.say("a long task", user="carol", name="Carol", **ROOM)
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await chat.say("/cancel", user="bob", name="Bob", **ROOM)
    await asyncio.wait_for(gateway.drain(), 10)

    assert [(n.text, n.private_to) for n in _notes(chat)] == [(REFUSED, BOB), (RUN_REFUSED, BOB)]
    assert len(reached) == 1  # Carol's run went on
