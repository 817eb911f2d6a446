"""Commands as the core's lines name them on Slack: ``/clarigate new`` in a classic bot's DM, where
the slash command works; ``@<bot> new`` in a channel and in an agent app's DM, whose
conversations are threads, which slash commands do not reach, so people mention the bot instead
(``adapters/slack/commands.py``). The real adapter against the fake Slack, the real core with a
scripted agent."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld, SlackWorld
from .fake_slack import FakeSlack


async def _thread_reply(world: SlackWorld, text: str) -> str:
    """What the bot posts in a channel thread after ``@bot <text>`` there."""
    _, ts = await world.user.mention("build me a thing")
    await world.settle()
    await world.user.mention(text, thread_ts=ts)
    await world.settle()
    reply = world.fake.posted()
    assert reply.get("thread_ts") == ts
    return reply["text"]


async def test_help_in_a_channel_thread_names_the_mention_not_the_slash_command(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    text = await _thread_reply(world, "help")
    assert (
        "@clarigate cancel — dismiss the open question, or stop the request in progress" in text.splitlines()
    )
    assert "@clarigate new — " in text and "/clarigate" not in text


async def test_the_mention_uses_the_bots_name_as_slack_shows_it(fake_slack: FakeSlack, make_world: MakeWorld):
    """auth.test's ``user`` is the bot user's username; people see (and type after @) the name
    Slack shows for it, its bot user's display name: ``users.info``, asked once at start."""
    fake_slack.bot_name = "helper_bot"  # auth.test's ``user``
    fake_slack.bot_display_name = "Release Helper"  # what a mention of the bot shows in Slack
    world = await make_world(ScriptedRunner())
    help_text = await _thread_reply(world, "help")
    status = await _thread_reply(world, "status")
    assert "@Release Helper status — " in help_text and "@Release Helper new starts a fresh one" in status
    assert "helper_bot" not in help_text + status and "@clarigate" not in help_text + status
    asked = [c.params["user"] for c in fake_slack.attempts("users.info")]
    assert asked.count("U0BOT") == 1  # asked once, at start, and kept


async def test_without_the_bots_shown_name_its_username_stands_in(
    fake_slack: FakeSlack, make_world: MakeWorld
):
    fake_slack.bot_name = "helper_bot"
    fake_slack.bot_display_name = "Release Helper"
    fake_slack.missing_scopes.add("users:read")  # users.info refused: the username will do
    world = await make_world(ScriptedRunner())
    text = await _thread_reply(world, "help")
    assert "@helper_bot status — " in text and "/clarigate" not in text


async def test_status_in_a_channel_thread_says_how_to_start_afresh_there(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    text = await _thread_reply(world, "status")
    assert "@clarigate new starts a fresh one" in text and "/clarigate" not in text


async def test_in_a_dm_the_slash_command_stays(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.dm("build me a thing")
    await world.settle()
    for typed in ("help", "status"):
        await world.user.slash_command(typed)
        await world.settle()
    help_text, status = (m["text"] for m in world.fake.of("chat.postMessage")[-2:])
    assert (
        "/clarigate cancel — dismiss the open question, or stop the request in progress"
        in help_text.splitlines()
    )
    assert "/clarigate new starts a fresh one" in status and "@clarigate" not in help_text + status


async def _agent_thread_reply(world: SlackWorld, text: str) -> str:
    """What the bot posts in an agent thread (``slack.agent_view``) after ``@bot <text>`` there."""
    _, ts = await world.user.dm("build me a thing")
    await world.settle()
    await world.user.dm(f"<@U0BOT> {text}", thread_ts=ts)
    await world.settle()
    reply = world.fake.posted()
    assert reply.get("thread_ts") == ts
    return reply["text"]


async def test_in_an_agent_thread_help_and_status_name_the_mention_typed_there(make_world: MakeWorld):
    """An agent app's DM is all threads, which no slash command reaches (Slack sends none of its
    thread): the lines name ``@clarigate cancel``, the form that works in the thread."""
    world = await make_world(ScriptedRunner(), slack={"agent_view": True})
    help_text = await _agent_thread_reply(world, "help")
    status = await _agent_thread_reply(world, "status")
    assert (
        "@clarigate cancel — dismiss the open question, or stop the request in progress"
        in help_text.splitlines()
    )
    assert "@clarigate new starts a fresh one" in status
    assert "/clarigate" not in help_text + status
