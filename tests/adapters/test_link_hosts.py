"""A link whose label reads as an address of another host shows where it really goes, on every
platform: "[https://accounts.example.com/reset](https://evil.example/steal)" must not read as the
one and open the other. A label naming the target's own host (or a parent domain of it) stays."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from clarigate.adapters.feishu.live import live_markdown
from clarigate.adapters.feishu.markup import escape_markdown
from clarigate.adapters.slack.live import edit_mrkdwn as slack_edit_mrkdwn
from clarigate.adapters.slack.live import task_chunk
from clarigate.adapters.slack.render import render_reply
from clarigate.adapters.slack.stream_text import stream_piece
from clarigate.adapters.telegram.live import live_html
from clarigate.adapters.telegram.markup import markdown_to_html
from clarigate.gateway.boundary.outbound_items import LiveView

from .live_untrusted import html_links, markdown_links, misleading, mrkdwn_links

DISGUISED = "Reset it at [https://accounts.example.com/reset](https://evil.example/steal)."
RENDERERS = [lambda text: render_reply(text)[0], markdown_to_html, escape_markdown]
IDS = ["slack", "telegram", "feishu"]


@pytest.mark.parametrize("render", RENDERERS, ids=IDS)
@pytest.mark.parametrize(
    "text",
    [
        DISGUISED,
        "Reset it at [accounts.example.com](https://evil.example/steal).",
        "Mail [help@accounts.example.com](https://evil.example/steal).",
        "See ![accounts.example.com](https://evil.example/steal).",
    ],
)
def test_a_link_labelled_with_another_address_shows_its_target(render, text):
    shown = render(text)
    assert "evil.example/steal" in shown and "accounts.example.com" not in shown, shown


@pytest.mark.parametrize("render", RENDERERS, ids=IDS)
def test_a_label_naming_the_targets_own_host_stays(render):
    shown = render(
        "Read [docs.example.com](https://docs.example.com/a) or [example.com](https://www.example.com/)."
    )
    # each target written once: as the link's target, never as its label too
    assert shown.count("https://docs.example.com/a") == 1 and shown.count("https://www.example.com/") == 1, (
        shown
    )


@pytest.mark.parametrize("render", RENDERERS, ids=IDS)
def test_a_file_named_by_its_link_keeps_its_name(render):
    """``setup.py`` and ``README.md`` end in country domains, but a label that is only a file name
    names the file the link opens, not a host: it stays (a file-like name with a path does not)."""
    target = "https://github.com/acme/tool/blob/main/setup.py"
    shown = render(f"See [setup.py]({target}) and [README.md](https://github.com/acme/tool).")
    assert "setup.py" in shown and shown.count(target) == 1, shown
    assert "README.md" in shown and shown.count("https://github.com/acme/tool)") <= 1, shown
    assert "evil.example/x" in render("Run [setup.py/install](https://evil.example/x).")


HOSTS = st.sampled_from(["evil.example", "accounts.example.com", "example.com", "a.b.example.org"])


#: What a reader does not see in a label (a zero-width space, a soft hyphen…), the dots an address
#: is read by as well as "." (an escaped one, an entity), and the styles a card's markdown shows a
#: label's part in: none makes a label name another host any less.
HIDDEN = st.sampled_from(["", "\u200b", "\u00ad", "\u2060", "\ufeff"])
DOTS = st.sampled_from([".", "\u3002", "\uff0e", "\uff61", "\\.", "&#46;"])
STYLES = st.sampled_from(["", "**", "*", "_", "~~", "`"])


@given(
    label=HOSTS,
    target=HOSTS,
    scheme=st.sampled_from(["https://", ""]),
    hidden=HIDDEN,
    dot=DOTS,
    style=STYLES,
)
@example(label="accounts.example.com", target="evil.example", scheme="", hidden="\u200b", dot=".", style="")
@example(label="accounts.example.com", target="evil.example", scheme="", hidden="", dot="\u3002", style="")
@example(label="accounts.example.com", target="evil.example", scheme="", hidden="", dot=".", style="**")
@example(label="accounts.example.com", target="evil.example", scheme="", hidden="", dot="&#46;", style="")
def test_no_rendered_link_has_a_label_naming_another_host(label, target, scheme, hidden, dot, style):
    first, _, rest = label.partition(".")
    written = f"{scheme}{style}{first}{style}{dot}{rest.replace('.', dot)}{hidden}/p"
    text = f"x [{written}](https://{target}/q) y"
    slack = render_reply(text)[0]
    for href, shown in re.findall(r"<(https://[^|>]+)\|([^>]+)>", slack):
        assert _same_or_parent(shown, href), slack
    for href, shown in re.findall(r'<a href="([^"]+)">(.*?)</a>', markdown_to_html(text)):
        assert _same_or_parent(re.sub("<[^>]*>", "", shown), href)
    for shown, href in re.findall(r"\[([^\]]+)\]\(([^)]+)\)", escape_markdown(text)):
        assert _same_or_parent(shown, href)


def _same_or_parent(shown: str, href: str) -> bool:
    """True when the host ``shown`` names, as read (entities as their characters; spaces, what is
    not seen and style marks left out; any dot a dot) is ``href``'s or a parent domain of it."""
    read = re.sub(r"[\s\u00ad\u200b\u2060\ufeff\\*_~`]", "", html.unescape(shown))
    named = re.sub(r"^https://", "", read.translate(str.maketrans("\u3002\uff0e\uff61", "..."))).split("/")[0]
    goes = href.removeprefix("https://").split("/")[0]
    return goes == named or goes.endswith("." + named)


@given(label=HOSTS, target=HOSTS, scheme=st.sampled_from(["https://", ""]))
def test_no_live_update_has_a_label_naming_another_host(label, target, scheme):
    """What a run's live message shows while the answer is written, on each platform (Slack's
    edited message, stream and task card, Telegram's draft or edited message, Feishu's card)."""
    text = f"x [{scheme}{label}/p](https://{target}/q) y"
    view = LiveView(mode="edit", text=text, status=f"🔄 [{label}](https://{target}/s)")
    streamed = stream_piece(text) + "\n\n" + task_chunk("step-1", view.status or "", "in_progress")["title"]
    assert not misleading(mrkdwn_links(slack_edit_mrkdwn(view))), slack_edit_mrkdwn(view)
    assert not misleading(markdown_links(streamed)), streamed
    assert not misleading(html_links(live_html(view))), live_html(view)
    assert not misleading(markdown_links(live_markdown(view))), live_markdown(view)
