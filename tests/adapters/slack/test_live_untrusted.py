"""What Slack receives while a run is shown live (its chat stream in a thread, its edited message
in a DM) when the model writes a link labelled with another host's address and mass mentions,
and an agent's step is longer than a task title may be: as in the reply, no link reads as one
address and opens another, nobody is pinged, and the step's title keeps to Slack's limit."""

from __future__ import annotations

import json
import re

from clarigate.adapters.slack.live import TASK_TITLE_LIMIT
from clarigate.adapters.slack.render import render_reply
from clarigate.agent.harness import TurnOutput
from tests.gateway.flow.test_streaming import StreamingRunner

from ..live_untrusted import HOSTILE, hostile_run, markdown_links, misleading, mrkdwn_links
from .conftest import MakeWorld, SlackWorld

#: A mention Slack would act on: ``<!…>`` (channel, here, a user group), ``<@…>``, a broadcast word.
PINGS = re.compile(r"<!|<@|@(channel|here|everyone)\b", re.IGNORECASE)
STREAM_METHODS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


def chunks(world: SlackWorld, kind: str) -> list[dict[str, str]]:
    """The chunks of ``kind`` the bot sent to its streams, in order."""
    return [
        chunk
        for call in world.fake.calls
        if call.method in STREAM_METHODS
        for chunk in call.params.get("chunks") or []
        if chunk.get("type") == kind
    ]


def sent(world: SlackWorld) -> list[str]:
    """Every text the bot sent to show a message: texts, chunks, blocks."""
    shown = ("chat.postMessage", "chat.update", *STREAM_METHODS)
    keys = ("text", "chunks", "markdown_text", "blocks")
    return [
        json.dumps({k: c.params.get(k) for k in keys}, ensure_ascii=False)
        for c in world.fake.calls
        if c.method in shown
    ]


async def test_a_stream_shows_no_misleading_link_pings_nobody_and_keeps_task_titles_short(
    make_world: MakeWorld,
):
    runner = StreamingRunner(hostile_run(), TurnOutput(replies=[HOSTILE]))
    world = await make_world(runner)
    await world.user.mention("how do I get back in?", user="U7")
    await world.settle()

    streamed = "".join(c["text"] for c in chunks(world, "markdown_text"))
    assert len(world.fake.of("chat.appendStream")) >= 3 and "guide" in streamed
    assert misleading(markdown_links(streamed)) == [], markdown_links(streamed)
    assert "accounts.example.com" not in streamed and "evil.example/steal" in streamed
    assert ("the guide", "https://example.com/guide") in markdown_links(streamed)  # an honest link stays
    titles = [c["title"] for c in chunks(world, "task_update")]
    step = [t for t in titles if "Paging" in t]
    assert step and all(len(t) <= TASK_TITLE_LIMIT and t.endswith("…") for t in step), step
    assert all("accounts.example.com" not in t and not misleading(markdown_links(t)) for t in step)
    assert not [text for text in sent(world) if PINGS.search(text)]
    (shown,) = world.fake.shown()
    assert shown["text"] == render_reply(HOSTILE)[0]  # the reply, as a reply posted whole


async def test_an_edited_live_message_shows_no_misleading_link_and_pings_nobody(make_world: MakeWorld):
    runner = StreamingRunner(hostile_run(), TurnOutput(replies=[HOSTILE]))
    world = await make_world(runner)
    await world.user.dm("how do I get back in?", user="U2", channel="D2")
    await world.settle()

    updates = [c.params["text"] for c in world.fake.calls if c.method in ("chat.postMessage", "chat.update")]
    assert len(updates) >= 3 and world.fake.streamed() == []
    for text in updates:
        assert misleading(mrkdwn_links(text)) == [] and "accounts.example.com" not in text, text
    assert any("<https://evil.example/steal|https://evil.example/steal>" in text for text in updates[:-1])
    step = [line for text in updates for line in text.split("\n") if "Paging" in line]
    assert step and all(len(line) <= len("🔄 __") + TASK_TITLE_LIMIT for line in step), step
    assert not [text for text in sent(world) if PINGS.search(text)]
