"""Text typed in Slack's "Other…" modal that names an option (its label, case aside) is that option:
a graph's own ``interrupt()`` is resumed with the option's value, not the text; a risk
confirmation's go-ahead option (its "Other…" reached from a stale or forged click: the message
shows none) is refused under the box with the line asking for "confirm", and "confirm" typed in
the box answers with it. The real slack-bolt adapter against the fake Slack, the real core."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.slack.render import OTHER_ACTION, button_value
from clarigate.adapters.testing import ScriptedRunner
from tests.agent import user_graphs
from tests.gateway.flow.test_typed_confirm import ASK, DELETE, LAYOUTS, asks, risk

from .conftest import MakeWorld, SlackWorld


def typed(text: str) -> dict[str, Any]:
    """The "Other…" modal's state as Slack submits it."""
    return {"answer": {"value": {"type": "plain_text_input", "value": text}}}


async def other_modal(world: SlackWorld, question: dict[str, Any], forged: bool = False) -> dict[str, Any]:
    """Click "Other…" under ``question`` (``forged``: a click on it where the message shows none)
    and return the modal Slack was asked to open."""
    payload = world.user.click_payload(question, "clarigate:o1" if forged else OTHER_ACTION)
    if forged:
        token = question["blocks"][-1]["elements"][0]["value"].split("|")[0]
        payload["actions"][0].update(action_id=OTHER_ACTION, value=button_value(token, "other"))
    await world.user.interact(payload)
    await world.adapter.idle()  # the modal opens beside the ack
    return world.fake.of("views.open")[-1]["view"]


@pytest.mark.parametrize("text", ["Staging", "STAGING"])
async def test_an_options_label_in_other_resumes_the_graph_with_its_value(
    make_world: MakeWorld, environments: Any, text: str
) -> None:
    world = await make_world(environments)
    await world.user.dm("deploy it")
    await world.settle()
    modal = await other_modal(world, world.fake.posted())
    response = await world.user.submit(modal, typed(text))
    assert response.status_code == 200 and not response.content  # accepted: the modal closes
    await world.settle()
    [answer] = user_graphs.ANSWERS
    assert (answer["response_kind"], answer["option_id"], answer["value"]) == (
        "option",
        "option-2",
        "stage-2",
    )
    assert world.fake.last_shown()["text"] == "Deploying to stage-2."


async def test_any_other_text_in_other_is_still_the_text(make_world: MakeWorld, environments: Any) -> None:
    world = await make_world(environments)
    await world.user.dm("deploy it")
    await world.settle()
    modal = await other_modal(world, world.fake.posted())
    await world.user.submit(modal, typed("the canary cluster"))
    await world.settle()
    [answer] = user_graphs.ANSWERS
    assert (answer["response_kind"], answer["value"]) == ("text", "the canary cluster")


async def test_a_go_ahead_option_in_other_asks_for_confirm_under_the_box(make_world: MakeWorld) -> None:
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    world = await make_world(runner)
    await world.user.dm("clean up the test data")
    await world.settle()
    question = world.fake.posted()
    modal = await other_modal(world, question, forged=True)

    response = await world.user.submit(modal, typed(DELETE))
    assert response.json() == {"response_action": "errors", "errors": {"answer": ASK}}
    await world.settle()
    assert [c.response for c in runner.calls] == [None] and world.fake.edits(question["ts"]) == []

    response = await world.user.submit(modal, typed("confirm"))
    assert response.status_code == 200 and not response.content
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == [DELETE]


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


async def test_a_photo_sent_with_the_pick_goes_with_confirm_typed_in_the_box(make_world: MakeWorld) -> None:
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    world = await make_world(runner)
    await world.user.dm("clean up the test data")
    await world.settle()
    question = world.fake.posted()
    shot = world.fake.add_file("F0SHOT", "tables.png", PNG, "image/png")
    await world.user.dm("2", subtype="file_share", files=[shot])  # the go-ahead pick, with a photo
    await world.settle()
    assert world.fake.last_shown()["text"] == ASK

    modal = await other_modal(world, question, forged=True)
    response = await world.user.submit(modal, typed("confirm"))
    assert response.status_code == 200 and not response.content
    await world.settle()
    answer = runner.calls[-1]
    assert answer.response is not None and answer.response.value == DELETE
    assert [image.data for image in answer.images] == [PNG]  # the model sees the photo
    assert "(attached: tables.png, image/png" in answer.text
    assert world.fake.last_shown()["text"] == f"ran with: {DELETE}"
