"""A run that shows "Working…" turns that message into its reply: one edit, no delete and repost."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request

from .conftest import MakeWorld


async def test_the_reply_is_edited_into_the_working_message(make_world: MakeWorld) -> None:
    world = await make_world(ScriptedRunner())  # "working…" shows for every run here
    await world.user.dm("hello")
    await world.settle()

    methods = [c.method for c in world.fake.calls if c.method not in ("auth.test", "users.info")]  # the chat
    assert methods == ["chat.postMessage", "chat.update"]  # was: post, delete, post
    (working,) = world.fake.of("chat.postMessage")
    assert working["text"].startswith("⏳")
    (shown,) = world.fake.shown()
    assert shown["text"] == "You said: hello"
    assert [b["type"] for b in shown["blocks"]] == ["section", "context_actions"]  # the reply, 👍/👎
    assert shown["ts"] == world.fake.edits()[0]["ts"]


async def test_a_question_replaces_the_working_message_as_a_new_post(make_world: MakeWorld) -> None:
    question = choice_request("Which region?", ["eu", "us"])
    world = await make_world(ScriptedRunner(lambda turn: asking(question)))
    await world.user.dm("deploy")
    await world.settle()

    # the buttons come in a message of their own (its ts is the question's); "working…" goes
    assert [m["text"] for m in world.fake.shown()] == ["Which region?"]
    assert len(world.fake.of("chat.delete")) == 1


async def test_a_failed_edit_posts_the_reply_and_removes_the_working_message(make_world: MakeWorld) -> None:
    world = await make_world(ScriptedRunner())
    world.fake.fail_next(1, status=400, methods={"chat.update"})  # e.g. message_not_found
    await world.user.dm("hello")
    await world.settle()

    assert [m["text"] for m in world.fake.shown()] == ["You said: hello"]
