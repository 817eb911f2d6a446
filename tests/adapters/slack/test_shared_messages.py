"""A message shared into the bot's DM or thread ("Share message", "Forward"): Slack sends its
event with the sharer's own words in ``text`` (often none) and the shared message in
``attachments`` (``is_share``, ``is_msg_unfurl``, ``text``, ``fallback``, ``author_name``…, as in
the payload of a share without a message in MercuryTechnologies/slack-web's golden tests). The
agent reads it as anything else that came with a message, marked as shared and by whom, beside
the sharer's words; over the sharer's open question it is what any message with only such an
attachment is (``flow.turn``): set aside, the question left open. The real adapter against the
fake Slack, the real core with a scripted agent."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld
from .fake_slack import TEAM_ID
from .slack_user import next_ts


def shared(text: str, author: str | None = "Ann Example", author_id: str = "U0ANN") -> dict[str, Any]:
    """The attachment a shared message comes as (``author``: None for one Slack names no one in)."""
    ts, channel = "1799999999.000100", "C0OPS"
    attachment: dict[str, Any] = {
        "from_url": f"https://test.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        "ts": ts,
        "author_id": author_id,
        "channel_id": channel,
        "channel_team": TEAM_ID,
        "channel_name": "ops",
        "is_msg_unfurl": True,
        "message_blocks": [{"team": TEAM_ID, "channel": channel, "ts": ts, "message": {"blocks": []}}],
        "color": "D0D0D0",
        "is_share": True,
        "fallback": f"[May 1st, 2027 10:00 AM] {author or 'someone'}: {text}",
        "text": text,
        "mrkdwn_in": ["text"],
        "footer": "Posted in #ops",
    }
    if author is not None:
        attachment.update(author_name=author, author_subname=author)
    return attachment


async def test_a_message_shared_without_words_reaches_the_agent_marked_as_shared(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    response, _ = await world.user.dm("", attachments=[shared("the deploy failed &amp; rolled back")])
    await world.settle()

    assert response.status_code == 200
    [turn] = runner.calls  # dropped without a word before
    assert turn.text == "(attached: shared message from Ann Example: “the deploy failed & rolled back”)"
    shown = world.fake.last_shown()["text"]  # the agent's reply, its text escaped once on the way out
    assert (
        shown
        == "You said: (attached: shared message from Ann Example: “the deploy failed &amp; rolled back”)"
    )


async def test_words_and_a_shared_message_give_the_agent_both(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    world.fake.add_user("U0BOB", display_name="Bob")
    text = "<@U0BOB> please check <https://x.example/run/7|run 7>"
    await world.user.dm("why did this fail?", attachments=[shared(text)])
    await world.settle()

    [turn] = runner.calls
    assert turn.text == (
        "why did this fail?\n\n"
        "(attached: shared message from Ann Example: “@Bob please check run 7 (https://x.example/run/7)”)"
    )


async def test_a_shared_message_without_an_author_says_only_that_it_was_shared(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("", attachments=[shared("ping", author=None, author_id="")])
    await world.settle()
    assert [c.text for c in runner.calls] == ["(attached: shared message: “ping”)"]


async def test_shared_text_is_read_not_obeyed_and_pings_no_one(make_world: MakeWorld):
    """Someone else's words: ``/new`` in them is no command, ``<!channel>`` no broadcast; the bot's
    reply (the agent's words, rendered as usual) shows them as text."""
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("build me a thing")
    await world.settle()
    await world.user.dm("", attachments=[shared("/new <!channel> *now*")])
    await world.settle()

    assert runner.calls[-1].text == "(attached: shared message from Ann Example: “/new @channel *now*”)"
    assert len({c.thread_id for c in runner.calls}) == 1  # the same conversation: nothing started afresh
    shown = world.fake.last_shown()["text"]
    assert "/new" in shown and "<!channel>" not in shown and "@channel" not in shown  # shown, not broadcast


async def test_a_mention_of_the_bot_inside_a_shared_message_calls_nobody(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.channel_message("", attachments=[shared("<@U0BOT> summarise the incident")])
    await world.settle()
    assert runner.calls == [] and world.fake.of("chat.postMessage") == []  # channel chatter, not for the bot


async def test_a_share_in_a_channel_thread_the_bot_is_in_reaches_it(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    _, ts = await world.user.mention("look into the outage")
    await world.settle()
    await world.user.channel_message("", thread_ts=ts, ts=next_ts(), attachments=[shared("db is down")])
    await world.settle()
    assert runner.calls[-1].text == "(attached: shared message from Ann Example: “db is down”)"
    reply = world.fake.last_shown()
    assert reply["thread_ts"] == ts and "db is down" in reply["text"]


def asks_which(turn: Turn) -> TurnOutput:
    """``build`` asks which framework; any other turn says what the agent read."""
    if turn.response is None and turn.text == "build":
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=[f"read: {turn.text}"])


async def test_over_the_sharers_open_question_a_share_alone_is_set_aside(make_world: MakeWorld):
    runner = ScriptedRunner(asks_which)
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()

    await world.user.dm("", attachments=[shared("Vue, obviously")])
    await world.settle()
    still_open = "The question “Which framework?” is still open, so I set that message aside"
    assert world.fake.last_shown()["text"] == f"{still_open}: please answer it first."
    assert len(runner.calls) == 1  # not run, not taken as the answer

    await world.user.dm(
        "2", attachments=[shared("Vue, obviously")]
    )  # typed words answer; the share goes along
    await world.settle()
    last = runner.calls[-1]
    assert last.response is not None and last.response.option_id == "option-2"
    assert last.text.endswith("\n\n(attached: shared message from Ann Example: “Vue, obviously”)")
