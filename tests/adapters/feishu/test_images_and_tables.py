"""Replies Feishu would refuse as cards for their images or tables, shown as cards all the same;
and the plain text a refused card goes out as, with only the mentions neutralized.

Feishu's card markdown takes an image's target for the key of an image the app uploaded and
refuses the card for an address (230099, "ErrCode: 200570; ErrMsg: card contains invalid image
keys"); it refuses a card with too many tables ("ErrCode: 11310; ErrMsg: card table number over
limit"). The fake open API refuses both (``card_schema``). A text message reads ``<at user_id=…>``
tags, nothing else of the ``<`` model text writes.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.links import safe_links
from clarigate.adapters.feishu.live import live_markdown
from clarigate.adapters.feishu.outgoing import text_content
from clarigate.adapters.feishu.render import CARD_LIMIT_BYTES, card_size, render_reply
from clarigate.adapters.feishu.tables import MAX_TABLES, table_count
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.outbound_items import LiveView

from .card_schema import check_card
from .cards import text_of
from .events import message_event


def table(n: int) -> str:
    return f"| metric | value |\n|---|---|\n| run {n} | {n * 7} ms |"


SIX_TABLES = "\n\n".join(f"Run {n}:\n\n{table(n)}" for n in range(1, 7))


def replying(text: str):
    return ScriptedRunner(lambda turn: TurnOutput(replies=[text]))


async def test_an_image_to_an_address_arrives_in_a_card_as_a_link_to_it(make_bot):
    reply = "Here is the chart: ![latency chart](https://example.com/latency.png) and ![](https://example.com/raw.png)"
    bot = await make_bot(replying(reply), streaming="off")
    await bot.deliver(message_event("show me the chart"))
    await bot.gateway.drain()
    assert [(c.body["msg_type"], c.code) for c in bot.api.posted()] == [
        ("interactive", 0)
    ]  # no text fallback
    [shown] = [text_of(card) for card in bot.api.shown()]
    assert "[latency chart](https://example.com/latency.png)" in shown
    assert "[https://example.com/raw.png](https://example.com/raw.png)" in shown
    assert "![" not in shown


async def test_a_reply_with_six_tables_arrives_as_cards_each_with_few_enough(make_bot):
    bot = await make_bot(replying(SIX_TABLES), streaming="off")
    await bot.deliver(message_event("compare the runs"))
    await bot.gateway.drain()
    calls = bot.api.posted()
    assert {(c.body["msg_type"], c.code) for c in calls} == {("interactive", 0)}
    shown = [text_of(card) for card in bot.api.shown()]
    assert [table_count(text) for text in shown] == [3, 3]  # every table still a table
    assert "".join(shown).count("| run ") == 6


def test_tables_a_cut_cannot_part_are_shown_as_text():
    nested = "- results:\n\n" + "\n\n".join("  " + table(n).replace("\n", "\n  ") for n in range(1, 6))
    [card] = render_reply(nested)
    check_card(card)
    assert table_count(text_of(card)) == MAX_TABLES
    assert text_of(card).count("| run ") == 5  # the rest shown as text, none left out


def test_a_live_card_shows_few_enough_tables():
    view = LiveView(mode="card", text=SIX_TABLES)
    assert table_count(live_markdown(view)) == MAX_TABLES


async def test_a_refused_reply_as_text_keeps_its_angle_brackets_and_mentions_no_one(make_bot):
    reply = 'Use `a <= b` or x<y, <b>not bold</b>; tell <at user_id="all"></at> and < AT id=all>.'
    bot = await make_bot(replying(reply), progress_after_seconds=100)
    bot.api.refuse_cards = True
    await bot.deliver(message_event("explain"))
    await bot.gateway.drain()
    (text,) = bot.api.texts.values()
    assert text == (
        'Use `a <= b` or x<y, <b>not bold</b>; tell \u2039at user_id="all">\u2039/at> and \u2039 AT id=all>.'
    )


@given(st.text(alphabet='<>/ atATuser_id="all&lt;#60;x\t', max_size=40))
def test_no_text_message_carries_an_at_tag(text):
    sent = json.loads(text_content(text))["text"].lower()
    assert not any(sent[i:].lstrip("/ \t").startswith("at") for i, c in enumerate(sent) if c == "<")
    assert "&lt;at" not in sent.replace(" ", "") and "&#60;at" not in sent.replace(" ", "")


_PIECES = [
    table(1),
    "  " + table(2).replace("\n", "\n  "),
    "> " + table(3).replace("\n", "\n> "),
    "![alt](https://example.com/a.png)",
    "![](https://example.com/b_c.png)",
    "[![x](https://e.com/i.png)](https://e.com)",
    "![k](img_v3_0238_abc)",
    "![a](https://x y.png)",
    "`![code](https://e.com/c.png)`",
    "```\n![fenced](https://e.com/f.png)\n| a |\n|---|\n```",
    "- item",
    "text",
    "\n",
    "\n\n",
    " ",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=60).map("".join))
def test_any_reply_of_images_and_tables_makes_cards_feishu_takes(text):
    for card in render_reply(text):
        check_card(card)  # no image to an address, at most 4 tables a markdown, 5 a card
        assert card_size(card) <= CARD_LIMIT_BYTES
        assert table_count(text_of(card)) <= MAX_TABLES
    live = live_markdown(LiveView(mode="card", text=text))
    assert table_count(live) <= MAX_TABLES


def test_an_image_right_after_an_exclamation_mark_keeps_the_mark():
    """ "Done!![a](…)": the "!" written before the image stays, and makes no image of the link."""
    for said, kept in (
        ("Done!![diagram](https://x.com/d.png)", "Done!"),
        ("Hi!!![a](https://x.com/a.png)", "Hi!!"),
    ):
        shown = safe_links(said)
        assert shown.startswith(kept) and "](https://x.com/" in shown
        assert "![" not in shown
