"""👍/👎 under a final answer on Slack: ``feedback_buttons`` in a ``context_actions`` block."""

from __future__ import annotations

from prometheus_client import REGISTRY

from clarigate.adapters.slack.feedback import FEEDBACK_ACTION
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld

QUESTION = choice_request("Which framework?", ["React", "Vue"])


def ask_then_answer(turn: Turn) -> TurnOutput:
    """Asks first; the answer to the question gets the final answer."""
    if turn.response is None and "deploy" in turn.text:
        return asking(QUESTION)
    return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}."])


def feedback_controls(message: dict) -> list[dict]:
    """The feedback_buttons elements of a message's context_actions blocks."""
    return [
        element
        for block in message.get("blocks") or []
        if block["type"] == "context_actions"
        for element in block["elements"]
        if element["type"] == "feedback_buttons"
    ]


def votes_counted(vote: str, name: str = "clarigate_feedback_total") -> float:
    """The votes counted so far on Slack (the counters live for the whole test process)."""
    return REGISTRY.get_sample_value(name, {"platform": "slack", "vote": vote}) or 0.0


async def test_the_buttons_sit_under_the_final_answer_not_under_the_question(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(ask_then_answer))
    await world.user.dm("deploy the app")
    await world.settle()
    question = world.fake.last_shown()
    assert "Which framework?" in question["text"] and not feedback_controls(question)

    await world.user.click(question, "clarigate:o1")
    await world.settle()
    answer = world.fake.last_shown()
    assert answer["text"] == "Going with React."
    (control,) = feedback_controls(answer)
    assert control["action_id"] == FEEDBACK_ACTION
    assert control["positive_button"]["text"]["text"] == "👍"
    assert control["negative_button"]["accessibility_label"] == "Bad answer"
    sections = [b["text"]["text"] for b in answer["blocks"] if b["type"] == "section"]
    assert sections == ["Going with React."]  # the answer shows above the buttons


async def test_a_streamed_answer_ends_with_the_buttons(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    _, ts = await world.user.mention("hello there")
    await world.settle()
    answer = world.fake.last_shown()
    assert answer["text"] == "You said: hello there" and answer["thread_ts"] == ts
    assert len(feedback_controls(answer)) == 1


async def test_one_vote_per_person_and_a_second_click_changes_it(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.dm("hello")
    await world.settle()
    answer = world.fake.last_shown()
    token = feedback_controls(answer)[0]["positive_button"]["value"].split("|")[0]
    up, down = votes_counted("up"), votes_counted("down")

    for user, vote in [("U1", "positive"), ("U1", "positive"), ("U1", "negative"), ("U2", "positive")]:
        response = await world.user.click(answer, FEEDBACK_ACTION, user=user, option_value=vote)
        assert response.status_code == 200
        await world.settle()

    assert await world.gateway.store.votes_on(token) == {"U1": "down", "U2": "up"}
    assert votes_counted("up") == up + 2 and votes_counted("down") == down + 1
    assert votes_counted("up", "clarigate_feedback_withdrawn_total") >= 1
    assert world.fake.of("chat.postEphemeral") == []  # Slack shows the choice itself


async def test_a_click_on_an_answer_too_old_is_told_to_that_person_only(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.dm("hello")
    await world.settle()
    answer = world.fake.last_shown()
    token = feedback_controls(answer)[0]["positive_button"]["value"].split("|")[0]
    await world.gateway.store.delete(f"feedback:{token}")  # its time ran out

    await world.user.click(answer, FEEDBACK_ACTION, user="U2", option_value="positive")
    await world.settle()
    (note,) = world.fake.of("chat.postEphemeral")
    assert note["user"] == "U2" and note["text"] == "This answer can no longer be rated."
