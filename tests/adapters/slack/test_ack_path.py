"""What follows an answer (``chat.update``, ephemeral notices) never holds back or fails the ack.

Slack shows the person an error when a click or submit is not answered 2xx within
3 seconds; a rate-limited or refused update must not turn an accepted answer into that.
"""

from __future__ import annotations

import asyncio

import httpx

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.protocol import FormField

from .conftest import MakeWorld, SlackWorld


def asks_framework(turn: Turn):
    """First turn asks which framework; the answer gets the echo reply."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def asked(make_world: MakeWorld) -> tuple[SlackWorld, ScriptedRunner, dict]:
    """A world where U1 has been asked the framework question; returns the posted question."""
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()
    return world, runner, world.fake.posted()


async def answered_while_held(world: SlackWorld, method: str, send) -> httpx.Response:  # type: ignore[no-untyped-def]
    """Hold ``method`` at the fake Slack, send the interaction, and return its HTTP answer,
    which must come while the held call is still waiting."""
    release = world.fake.hold(method)
    request = asyncio.create_task(send())
    done, _ = await asyncio.wait({request}, timeout=10)
    try:
        assert request in done, f"the ack waited for {method}"
        assert world.fake.of(method) == []  # the call is still held
    finally:
        release.set()
        await asyncio.gather(request, return_exceptions=True)
    return request.result()


async def test_a_click_is_acked_before_the_message_update_is_answered(make_world: MakeWorld):
    world, runner, question = await asked(make_world)
    response = await answered_while_held(
        world, "chat.update", lambda: world.user.click(question, "clarigate:o2")
    )
    assert response.status_code == 200
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Vue"]
    assert world.fake.edits(question["ts"])  # the question shows the answer


async def test_a_refused_message_update_does_not_fail_an_accepted_click(make_world: MakeWorld):
    world, runner, question = await asked(make_world)
    world.fake.fail_next(1, status=400, methods={"chat.update"})  # e.g. message_not_found
    response = await world.user.click(question, "clarigate:o1")
    await world.settle()
    assert response.status_code == 200
    assert [c.response.value for c in runner.calls if c.response is not None] == ["React"]


async def test_a_refusal_notice_neither_holds_nor_fails_the_ack(make_world: MakeWorld):
    world, runner, question = await asked(make_world)
    held = await answered_while_held(
        world, "chat.postEphemeral", lambda: world.user.click(question, "clarigate:o1", user="U2")
    )
    await world.settle()  # the held notice is delivered before the next one is refused
    world.fake.fail_next(1, status=400, methods={"chat.postEphemeral"})
    refused = await world.user.click(question, "clarigate:o2", user="U3")
    await world.settle()
    assert [held.status_code, refused.status_code] == [200, 200]
    assert [e["user"] for e in world.fake.of("chat.postEphemeral")] == ["U2"]
    assert [c for c in runner.calls if c.response is not None] == []


async def test_a_modal_submit_is_acked_before_the_message_update_is_answered(make_world: MakeWorld):
    world, runner, question = await asked(make_world)
    await world.user.click(question, "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    values = {"answer": {"value": {"type": "plain_text_input", "value": "Svelte"}}}
    response = await answered_while_held(world, "chat.update", lambda: world.user.submit(modal, values))
    assert response.status_code == 200 and not response.content  # an empty ack closes the modal
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Svelte"]
    assert "Svelte" in str(world.fake.edits(question["ts"])[-1]["blocks"])


async def test_a_refusal_in_a_channel_thread_is_shown_in_that_thread(make_world: MakeWorld):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    _, ts = await world.user.mention("build")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:o1", user="U2")
    await world.settle()
    notice = world.fake.of("chat.postEphemeral")[-1]
    assert (notice["channel"], notice["user"], notice.get("thread_ts")) == ("C1", "U2", ts)


async def test_a_modal_submitted_after_a_typed_answer_closes_and_says_who_answered(make_world: MakeWorld):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    _, ts = await world.user.mention("build")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    await world.user.channel_message("Vue", thread_ts=ts)  # answered by typing meanwhile
    await world.settle()

    typed = {"answer": {"value": {"type": "plain_text_input", "value": "Svelte"}}}
    late = await world.user.submit(modal, typed)
    await world.settle()

    assert late.status_code == 200 and not late.content  # the modal closes
    notice = world.fake.of("chat.postEphemeral")[-1]
    shown = (notice["user"], notice["text"], notice.get("thread_ts"))
    assert shown == ("U1", "You already answered this question.", ts)
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Vue"]


async def test_other_is_acked_while_views_open_is_still_waiting(make_world: MakeWorld):
    world, _, question = await asked(make_world)
    click = lambda: world.user.click(question, "clarigate:other")  # noqa: E731
    response = await answered_while_held(world, "views.open", click)
    await world.adapter.idle()
    assert response.status_code == 200
    assert world.fake.of("views.open")[-1]["view"]["callback_id"] == "clarigate:other"


async def test_a_slow_views_open_inside_the_trigger_lifetime_opens_the_box_and_says_nothing(
    make_world: MakeWorld,
):
    world, runner, question = await asked(make_world)
    release = world.fake.hold("views.open")  # Slack takes 2.5 s, inside the trigger's 3 s
    response = await world.user.click(question, "clarigate:other")
    assert response.status_code == 200
    await asyncio.sleep(2.5)
    release.set()
    await world.adapter.idle()

    assert world.fake.of("views.open")[-1]["view"]["callback_id"] == "clarigate:other"
    assert world.fake.of("chat.postEphemeral") == []  # no "could not be opened" beside the box
    modal = world.fake.of("views.open")[-1]["view"]
    values = {"answer": {"value": {"type": "plain_text_input", "value": "Svelte"}}}
    await world.user.submit(modal, values)
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Svelte"]


async def test_an_expired_trigger_tells_the_person_privately_how_to_answer_by_typing(make_world: MakeWorld):
    world, runner, question = await asked(make_world)
    world.fake.triggers_expired = True
    response = await world.user.click(question, "clarigate:other")
    await world.adapter.idle()

    assert response.status_code == 200
    assert [c.answer["error"] for c in world.fake.attempts("views.open")] == ["expired_trigger_id"]
    notice = world.fake.of("chat.postEphemeral")[-1]
    assert notice["user"] == "U1" and notice["text"].startswith("The answer box could not be opened.")
    assert "1. React" in notice["text"] and "Reply with a number or your own answer." in notice["text"]

    await world.user.dm("Svelte")  # the typed route works
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response is not None] == ["Svelte"]


async def test_a_rate_limited_views_open_is_not_retried_and_not_silent(make_world: MakeWorld):
    world, _, question = await asked(make_world)
    world.fake.fail_next(1, status=429, retry_after=1, methods={"views.open"})
    response = await world.user.click(question, "clarigate:other")
    await world.adapter.idle()
    assert response.status_code == 200
    assert [c.status for c in world.fake.attempts("views.open")] == [429]  # once: the trigger is short-lived
    assert world.fake.of("chat.postEphemeral")[-1]["text"].startswith("The answer box could not be opened.")


async def test_a_replayed_fill_in_click_opens_one_form_and_a_failed_one_says_how_to_type(
    make_world: MakeWorld,
):
    def script(turn: Turn):
        if turn.response is None:
            return asking(form_request("Where to?", [FormField(name="env", label="Env", required=True)]))
        return ScriptedRunner().script(turn)

    world = await make_world(ScriptedRunner(script))
    await world.user.dm("deploy")
    await world.settle()
    question = world.fake.posted()
    click = world.user.click_payload(question, "clarigate:form")
    await world.user.interact(click)
    await world.user.interact(click)  # redelivered: the same trigger id, already exchanged
    await world.adapter.idle()
    answers = [c.answer.get("error") for c in world.fake.attempts("views.open")]
    assert answers == [None, "exchanged_trigger_id"]
    assert world.fake.of("chat.postEphemeral") == []  # the form is open: nothing to say

    world.fake.triggers_expired = True
    await world.user.click(question, "clarigate:form")
    await world.adapter.idle()
    notice = world.fake.of("chat.postEphemeral")[-1]["text"]
    assert "`name: value`" in notice and "Env (required)" in notice  # how to answer the form by typing
