"""An answer that crosses another member's approval in a shared conversation.

Ann's question is open; Bob's request is running and ends on an approval for him; Ann's click on
her question, taken meanwhile, runs after it. Her answer's run ends the approval's interrupt (the
agent resumes it with a rejection before it reads her answer), so Bob's approval is shown closed,
saying Ann's answer to an earlier question ran first and it was not done (she sent no new
message), and his later click says so instead of being accepted for a decision no longer there.
"""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.store.base import Store

ROOM = {"chat": "room", "topic": "t", "direct": False}
FRAMEWORK = choice_request("Which framework?", ["React", "Vue"], request_id="clarification:framework")
APPROVAL = choice_request("Run delete_records?", ["Approve", "Reject"], request_id="approval:int-1")


class BobsRun:
    """Bob's run: ``started`` once it works, ``go`` lets it end."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.go = asyncio.Event()

    async def working(self) -> None:
        """Until the test lets it end, with the test told it works (no timing guessed)."""
        self.started.set()
        await self.go.wait()

    async def set_to_work(self, say) -> None:
        """Bob's ``wipe``, returning once his run works."""
        await say("wipe", user="bob", name="Bob", **ROOM)
        await asyncio.wait_for(self.started.wait(), 10)


def script_for(bobs_run: BobsRun):
    """``build`` asks Ann's question; ``wipe`` waits for ``bobs_run`` and ends on the approval."""

    async def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.endswith("build"):
            return asking(FRAMEWORK)
        if turn.response is None and turn.text.endswith("wipe"):
            await bobs_run.working()
            return asking(APPROVAL)
        said = turn.response.value if turn.response is not None else turn.text.splitlines()[-1]
        return TurnOutput(replies=[f"got: {said}"])

    return script


async def test_anns_answer_run_after_bobs_approval_closes_it_naming_her(store: Store, make_gateway):
    bobs_run = BobsRun()
    runner = ScriptedRunner(script_for(bobs_run))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    anns = chat.last_request()

    await bobs_run.set_to_work(chat.say)  # Bob's run works...
    assert (await chat.click(1, user="ann", token=anns.token)).status is AnswerStatus.ACCEPTED
    bobs_run.go.set()  # ...and ends on his approval, before Ann's answer runs
    await gateway.drain()

    bobs = chat.last_request()
    assert bobs.request.request_id == APPROVAL.request_id
    assert chat.texts("room")[-1] == "got: Vue"  # Ann's answer ran
    crossed = "✖ Closed: ann's answer to an earlier question ran first; this was not done."
    assert crossed in [c.answered_line for c in chat.closed()]
    late = await chat.click(0, user="bob", token=bobs.token)
    assert late.status is AnswerStatus.ALREADY_ANSWERED
    said = "This question was closed: ann's answer to an earlier question ran first, and this was not done."
    assert late.message == said
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Vue"]


async def test_an_answer_leaves_a_newer_plain_question_open(store: Store, make_gateway):
    """A question that is no interrupt holds no run: Ann's answer leaves Bob's open."""
    bobs_run = BobsRun()
    runner = ScriptedRunner(script_for(bobs_run))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("build", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    anns = chat.last_request()
    bobs_question = FRAMEWORK.model_copy(update={"request_id": "clarification:bobs"})

    async def bob_asks(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.endswith("wipe"):
            await bobs_run.working()
            return asking(bobs_question)
        return await script_for(bobs_run)(turn)

    runner.script = bob_asks
    await bobs_run.set_to_work(chat.say)
    await chat.click(0, user="ann", token=anns.token)
    bobs_run.go.set()
    await gateway.drain()

    bobs = chat.last_request()
    assert (await gateway.pending_by_token(bobs.token)).status == "pending"
    assert (await chat.click(1, user="bob", token=bobs.token)).status is AnswerStatus.ACCEPTED
