"""A run that streamed the model's words, then asks a question with text shown above it (what the
question cannot hold, in full: ``Asked.in_full``, an approval's calls): the live message keeps the
words as streamed; the text above and the question follow as messages of their own."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.events import TextDelta
from clarigate.agent.harness import TurnOutput
from clarigate.agent.interrupt_kinds import Asked, asking
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.flow.test_streaming import StreamingRunner, items, live_adapter

LEAD = "I will clean up the staging database now, it holds stale rows."
ABOVE = "```\ndelete_rows(table='events', older_than='30d')\n```"


class AskingAfterLead(ScriptedRunner):
    """Streams a lead (the model's words before its tool call, in the message with the call: not
    a reply), then asks with the calls shown above the question, as the agent's approvals do
    (``interrupt_kinds.asking``)."""

    def __init__(self, lead: str = LEAD, above: str = ABOVE) -> None:
        self.lead = lead
        output = asking(TurnOutput(), Asked(choice_request("Run these?", ["Approve", "Reject"]), above))
        super().__init__(lambda turn: output)

    async def run_turn(self, run: RunInput) -> TurnOutput:
        for index, word in enumerate(self.lead.split(" ")):
            if run.on_event is not None:
                await run.on_event(TextDelta(("" if index == 0 else " ") + word, "m1"))
            await asyncio.sleep(0.15)
        return await super().run_turn(run)


async def test_the_streamed_lead_keeps_the_live_message_and_the_text_above_follows(make_gateway):
    gateway, chat = await make_gateway(
        MemoryStore("t"), AskingAfterLead(), adapter_class=live_adapter(), progress_after_seconds=1.0
    )
    await chat.say("clean it")
    await gateway.drain()
    lead, above, question = items(chat)
    assert isinstance(lead, TextReply) and lead.text == LEAD and lead.live is not None
    assert not lead.question_follows  # the text above comes between: the question cannot close it
    assert isinstance(above, TextReply) and above.text == ABOVE and above.live is None
    assert isinstance(question, ClarificationOut)


async def test_a_reply_that_does_not_go_on_from_the_stream_leaves_it_for_the_question(make_gateway):
    # the model's words before its tool call, then its reply in a message of its own, then a
    # question: the reply finishes the live message, but no stream is held open to go on from
    # the words it showed into a reply that does not begin with them
    events = [*(TextDelta(w, "m1") for w in ("Let me ", "look.")), 0.4, TextDelta("Two ways.", "m2"), 0.3]
    output = TurnOutput(replies=["Two ways."], request=choice_request("Which?", ["A", "B"]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), StreamingRunner(events, output), adapter_class=live_adapter()
    )
    await chat.say("go")
    await gateway.drain()
    reply, question = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == "Two ways."
    assert not reply.question_follows and isinstance(question, ClarificationOut)


async def test_a_reply_that_goes_on_from_the_stream_may_hold_it_for_the_question(make_gateway):
    events = [*(TextDelta(w, "m1") for w in ("Two ", "ways ", "forward.")), 0.4]
    output = TurnOutput(replies=["Two ways forward."], request=choice_request("Which?", ["A", "B"]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), StreamingRunner(events, output), adapter_class=live_adapter()
    )
    await chat.say("go")
    await gateway.drain()
    reply, question = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.question_follows


async def test_a_reply_going_on_from_an_emoji_streamed_in_halves_may_hold_it_for_the_question(make_gateway):
    # the stream showed the emoji whole (its halves joined); the reply, with its halves, goes on from it
    events = [TextDelta("Two ways \ud83d", "m1"), 0.3, TextDelta("\ude80 forward.", "m1"), 0.4]
    output = TurnOutput(
        replies=["Two ways \ud83d\ude80 forward."], request=choice_request("Which?", ["A", "B"])
    )
    gateway, chat = await make_gateway(
        MemoryStore("t"), StreamingRunner(events, output), adapter_class=live_adapter()
    )
    await chat.say("go")
    await gateway.drain()
    assert [view.text for _, view in chat.shown if view.text] == ["Two ways ", "Two ways 🚀 forward."]
    reply, question = items(chat)
    assert isinstance(reply, TextReply) and reply.text == "Two ways 🚀 forward." and reply.question_follows
