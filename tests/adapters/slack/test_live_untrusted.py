"""What Slack receives while a run is shown live (its chat stream in a thread, its edited message
in a DM) when the model writes a link labelled with another host's address and mass mentions,
and an agent's step is longer than a task title may be: as in the reply, no link reads as one
address and opens another, nobody is pinged (a broadcast word cut between two updates
included), an address stays whole, an unsafe link's target never goes live, no code block is
left empty, and the step's title keeps to Slack's limit. Nor do halves of an emoji, streamed one
a piece, reach Slack or stop the updates."""

from __future__ import annotations

import asyncio
import json
import re

from clarigate.adapters.slack.live import TASK_TITLE_LIMIT, piece_end
from clarigate.adapters.slack.render import render_reply
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.events import TextDelta
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.runners.base import RunInput
from tests.gateway.flow.test_streaming import StreamingRunner

from ..live_untrusted import (
    HALVES,
    HALVES_READ,
    HOSTILE,
    half_pairs,
    halves_run,
    hostile_run,
    markdown_links,
    misleading,
    mrkdwn_links,
)
from .conftest import MakeWorld, SlackWorld
from .test_live_replies import SHOWN_METHODS, scripted_agent, slowly, streamed_text

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


BROADCASTS = re.compile(r"<!|<@|@(channel|here|everyone)", re.IGNORECASE)
MENACING = "Heads up <!channel> and <!here|here>, ping <@U0BOT> & @here @everyone @Channel <https://x.t|x>."


def reached_slack(world: SlackWorld) -> list[str]:
    """Every piece of text the bot sent to show a message."""
    texts = []
    for call in world.fake.calls:
        if call.method in SHOWN_METHODS:
            texts.append(json.dumps({k: call.params.get(k) for k in ("text", "chunks", "markdown_text")}))
    return texts


async def test_no_mass_mention_from_the_model_reaches_slack_in_any_update(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(MENACING, 2.5)]) as agent:
        world = await make_world(agent)
        await world.user.mention("say it")
        await world.settle()  # one at a time: two live runs in a workspace share its budget
        await world.user.dm("say it", user="U2", channel="D2")
        await world.settle()

    assert world.fake.of("chat.appendStream") and len(world.fake.edits()) >= 3
    sent = reached_slack(world)
    assert sent and not [text for text in sent if BROADCASTS.search(text)]
    assert all("&lt;!channel&gt;" in m["text"] for m in world.fake.shown())  # shown as written


class SplitRunner(ScriptedRunner):
    """Writes ``pieces`` (a float: a pause) to ``on_event``, then replies with their text."""

    def __init__(self, pieces: list[str | float]) -> None:
        self.pieces = pieces
        text = "".join(p for p in pieces if isinstance(p, str))
        super().__init__(lambda turn: TurnOutput(replies=[text]))

    async def run_turn(self, run: RunInput) -> TurnOutput:
        for piece in self.pieces:
            if isinstance(piece, float):
                await asyncio.sleep(piece)
            elif run.on_event is not None:
                await run.on_event(TextDelta(piece, "m1"))
        return await super().run_turn(run)


async def test_a_broadcast_word_split_between_updates_is_still_broken(make_world: MakeWorld):
    # "@he" is on show for over a second before "re" comes: the stream holds the "@" back
    pieces: list[str | float] = ["Tell everyone @he", 1.3, "re now, and @every", 1.3, "one too.", 0.3]
    world = await make_world(SplitRunner(pieces))
    await world.user.mention("announce it")
    await world.settle()

    streamed = streamed_text(world)
    assert streamed.startswith("Tell everyone ") and not BROADCASTS.search(streamed.replace("\u200b", "~"))
    assert not [text for text in reached_slack(world) if BROADCASTS.search(text)]
    assert world.fake.last_shown()["text"] == "Tell everyone @\u200bhere now, and @\u200beveryone too."


async def test_an_address_split_between_updates_stays_whole(make_world: MakeWorld):
    # the "@" is held back until "here" comes: the address it belongs to went in the piece before
    pieces: list[str | float] = [
        "Docs: https://example.com/@",
        1.3,
        "here/x or ops@",
        1.3,
        "channel.io, not @here! Thanks.",
        0.3,
    ]
    world = await make_world(SplitRunner(pieces))
    await world.user.mention("where are the docs?")
    await world.settle()

    streamed = streamed_text(world)  # (a piece ends after a space: the last word goes with the reply)
    assert streamed == "Docs: https://example.com/@here/x or ops@channel.io, not @\u200bhere! "
    assert world.fake.last_shown()["text"] == (
        "Docs: <https://example.com/@here/x|https://example.com/@\u200bhere/x>"
        " or ops@channel.io, not @\u200bhere! Thanks."
    )


def test_pieces_end_between_words_and_never_inside_a_possible_broadcast():
    assert piece_end("Hello wor", 0) == len("Hello ")
    assert piece_end("Hello world and more", 6) == len("Hello world and ")
    cjk = "好的，我来检查一下部署"
    assert piece_end(cjk, 0) == len(cjk)  # no spaces: cut where it stands
    text = "x" * 50 + " ping @he"
    assert text[: piece_end(text, 0)] == "x" * 50 + " ping "
    assert piece_end("ping @", 0) == len("ping ")
    assert piece_end("mail me@example.com", 0) == len("mail ")
    assert piece_end("a" * 60 + "@her", 0) == 60
    assert piece_end("a" * 60 + "@hello", 0) == 66  # not a broadcast word: it goes


UNSAFE_TARGET = re.compile(r"\]\s*\(\s*<?(?!https?://|mailto:)", re.IGNORECASE)


async def test_the_stream_shows_unsafe_links_as_their_labels_only(make_world: MakeWorld):
    # Slack reads the streamed chunks as Markdown: a "slack://" or "javascript:" target must not
    # reach it, even when an update ends inside the link ("[Re-auth" | "orize here](…)", "]" | "(")
    pieces: list[str | float] = [
        "Your token expired. [Re-auth",
        1.3,
        "orize here](slack://app?team=T0TEAM&id=A0EVIL&tab=home) or [reset it]",
        1.3,
        "(javascript:alert(document.cookie)) or read [the guide](https://example.com/auth) now.",
        0.3,
    ]
    world = await make_world(SplitRunner(pieces))
    await world.user.mention("why can't I post?")
    await world.settle()

    assert len(world.fake.of("chat.appendStream")) >= 2
    streamed = "".join(
        chunk["text"]
        for method in ("chat.startStream", "chat.appendStream", "chat.stopStream")
        for call in world.fake.of(method)
        for chunk in call.get("chunks") or []
        if chunk.get("type") == "markdown_text"
    )
    assert not UNSAFE_TARGET.search(streamed), streamed
    assert streamed == (  # all but the last word, which the reply brings
        "Your token expired. Re-authorize here or reset it or read [the guide](https://example.com/auth) "
    )
    shown = world.fake.last_shown()["text"]  # the reply in mrkdwn: unsafe links as their labels too
    guide = "<https://example.com/auth|the guide>"
    assert shown == f"Your token expired. Re-authorize here or reset it or read {guide} now."


async def test_a_link_longer_than_a_message_reaches_slack_whole_or_as_text_never_half(make_world: MakeWorld):
    url = "https://files.example.com/report.pdf?sig=" + "Ab3" * 1400
    label = "the quarterly report with every table and chart " * 90
    answer = f"Here it is: [download]({url})\n\nSee [{label.strip()}](https://example.com/q3)."
    world = await make_world(ScriptedRunner(lambda turn: TurnOutput(replies=[answer])), streaming="off")
    await world.user.dm("send me the report")
    await world.settle()

    texts = [m["text"] for m in world.fake.shown()]
    assert len(texts) >= 3 and all(len(t) <= 3900 for t in texts)
    assert all(re.fullmatch(r"(?:[^<>]|<[^<>]*>)*", t) for t in texts), [t[:60] for t in texts]
    assert texts[0].startswith("Here it is: download (https://files.example.com/report.pdf?sig=Ab3")
    assert texts[-1].endswith("every table and chart (https://example.com/q3).")


def _migration_reply(pad: int) -> str:
    """Paragraphs, then a code block of long lines: ``pad`` moves where the first message ends."""
    paragraphs = "\n\n".join(
        f"Paragraph {n} says what step {n} of the migration does and why." for n in range(55)
    )
    code = "\n".join(f"UPDATE accounts SET plan = 'pro' WHERE id = {n};  -- " + "x" * 60 for n in range(40))
    return f"{paragraphs}\n\n{'w' * pad}\n\n```sql\n{code}\n```\n\nThat is all."


EMPTY_CODE = re.compile(r"```\s*```")


async def test_a_reply_cut_right_at_its_code_block_posts_no_empty_code_block(make_world: MakeWorld):
    # the fence fits in the first message, the code's first line does not: the code starts the next
    answer = _migration_reply(350)
    world = await make_world(ScriptedRunner(lambda turn: TurnOutput(replies=[answer])), streaming="off")
    await world.user.dm("how do we migrate?")
    await world.settle()

    texts = [m["text"] for m in world.fake.shown()]
    assert len(texts) == 3 and all(len(t) <= 3900 and t.strip() for t in texts)
    assert not [t[-40:] for t in texts if EMPTY_CODE.search(t)]
    assert texts[0].endswith("w" * 350)  # the text, then the code whole in the next message
    assert texts[1].startswith("```\nUPDATE accounts SET plan = 'pro' WHERE id = 0;")
    code = "".join(re.findall(r"```\n(.*?)\n```", "\n".join(texts), re.DOTALL))
    assert all(f"WHERE id = {n};" in code for n in range(40)) and texts[-1].endswith("That is all.")


async def test_an_emoji_streamed_in_halves_reaches_slack_whole_and_the_updates_go_on(make_world: MakeWorld):
    # a stream's chunks carried the halves (JSON escapes) to Slack; a DM's edit raised
    # UnicodeEncodeError and the live message stopped at "Deployed"
    world = await make_world(StreamingRunner(halves_run(), TurnOutput(replies=[HALVES])))
    await world.user.mention("how did the deploy go?", user="U7")
    await world.settle()
    await world.user.dm("how did the deploy go?", user="U2", channel="D2")
    await world.settle()

    streamed = "".join(c["text"] for c in chunks(world, "markdown_text"))
    assert streamed.startswith("Deployed 🚀 then \ufffd") and not half_pairs(streamed), streamed
    assert [c["title"] for c in chunks(world, "task_update") if "Checking" in c["title"]][0] == (
        "Checking \ufffd the rollout"
    )
    edits = [
        c.params["text"]
        for c in world.fake.calls
        if c.method == "chat.update" and c.params["channel"] == "D2"
    ]
    assert "🔄 _Checking \ufffd the rollout_" in edits and "Deployed" in edits
    assert any(text.startswith("Deployed 🚀") for text in edits[:-1]), edits
    assert not [text for text in edits if half_pairs(text) or "Deployed \ufffd" in text], edits
    assert [m["text"] for m in world.fake.shown()] == [HALVES_READ, HALVES_READ]  # the replies, as ever
