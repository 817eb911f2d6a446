"""Cards Feishu accepts, and what happens when it refuses one anyway.

Feishu counts every element of a JSON 2.0 card, ``plain_text`` included, against its
limit of 200; the fake open API holds cards to that rule (and to the URL + CJK one) and
answers a broken card with code 230099, as Feishu does.
"""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clarigate.adapters.feishu.markup import escape_markdown
from clarigate.adapters.feishu.render import (
    MAX_ELEMENTS,
    card_json,
    element_count,
    native_card,
    render_clarification,
    render_reply,
)
from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, HumanInputRequest, Option, render_text_fallback
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.boundary.port import DeliveryFailed

from .card_schema import CardRuleBroken, check_card
from .cards import button, is_text_fallback, payload, text_of
from .events import message_event

P2P = Conversation(platform="feishu", workspace="t", chat_id="oc_p2p", is_direct=True)


def dropdown_form() -> HumanInputRequest:
    """Eight dropdowns of 24 options: small in bytes, over 200 elements once every text counts."""
    options = [Option(id=f"o-{i}", label=f"choice {i}", value=str(i)) for i in range(24)]
    fields = [
        FormField(name=f"pick_{n}", label=f"Pick {n}", type="select", options=options) for n in range(8)
    ]
    return HumanInputRequest(
        request_id="clarification:dropdowns", tool_call_id="dropdowns", question="Choose for each team?",
        input_mode="form", fields=fields,
    )  # fmt: skip


def test_the_element_count_is_feishus_every_plain_text_counted():
    card = native_card(dropdown_form(), "tok")
    assert element_count(card) > MAX_ELEMENTS  # 8 × 24 option texts alone are 192
    with pytest.raises(CardRuleBroken, match="elements and components"):
        check_card(card)  # the fake open API would refuse it: the rule catches what was sent before


async def test_a_form_over_200_elements_is_asked_as_text_and_feishu_never_refuses(make_bot):
    form = dropdown_form()  # the agent's turn carries the text rendering, as the real agent's does
    bot = await make_bot(
        ScriptedRunner(lambda turn: TurnOutput(request=form, fallback_text=render_text_fallback(form)))
    )
    await bot.deliver(message_event("plan the teams"))
    await bot.gateway.drain()
    calls = bot.api.message_calls()
    # "Working…" (a streaming card), recalled when the question comes, then the question: none refused
    assert [(c.method, c.status) for c in calls] == [("POST", 200), ("DELETE", 200), ("POST", 200)]
    assert len(bot.api.shown()) == 1
    shown = bot.api.shown()[-1]
    assert is_text_fallback(shown) and "Choose for each team?" in text_of(shown)
    assert "Pick 7" in text_of(shown)  # the fields are in the text, to answer with a typed reply
    assert button(shown, "Cancel")


def test_a_bare_url_keeps_a_space_before_cjk_text():
    [card] = render_reply("部署文档见 https://open.feishu.cn/document中文说明，谢谢")
    check_card(card)
    assert "https://open.feishu.cn/document 中文说明" in text_of(card)
    glued = {"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": "见 https://x.cn/a中文"}]}}
    with pytest.raises(CardRuleBroken, match="URL runs into CJK"):
        check_card(glued)


def test_a_url_with_chinese_in_it_stays_whole():
    for url in [
        "https://zh.wikipedia.org/wiki/中文",
        "https://zh.wikipedia.org/wiki/中文_(消歧义)",
        "https://example.cn/search?q=部署&lang=zh",
        "https://example.cn/文档/部署.html",
    ]:
        [card] = render_reply(f"详见 {url} 或者问我。见{url}，谢谢")
        check_card(card)
        assert text_of(card) == f"详见 {url} 或者问我。见{url} ，谢谢"
    two = escape_markdown("https://a.cn/docs说明https://b.cn/faq中文")
    assert two == "https://a.cn/docs 说明https://b.cn/faq 中文"


#: A path segment or query value: a word in ASCII or in Chinese (a mix is where a URL and prose
#: cannot be told apart: ``…/document中文说明``).
segment = st.one_of(
    st.text(alphabet="abc-", min_size=1, max_size=6), st.text(alphabet="文档部署", min_size=1, max_size=6)
)


@given(
    segments=st.lists(segment, min_size=1, max_size=4),
    query=st.one_of(st.none(), segment),
    prose=st.text(alphabet="谢谢说明。，", min_size=1, max_size=5),
)
def test_a_url_keeps_its_chinese_parts_and_prose_glued_to_it_is_set_apart(segments, query, prose):
    url = "https://example.cn/" + "/".join(segments) + (f"?q={query}" if query else "")
    shown = escape_markdown(f"{url} {prose}")  # written apart: nothing is changed
    assert shown == f"{url} {prose}"
    glued = escape_markdown(f"https://example.cn/docs{prose}")  # prose run into a bare URL
    assert glued == f"https://example.cn/docs {prose}"
    check_card({"schema": "2.0", "body": {"elements": [{"tag": "markdown", "content": glued}]}})


async def test_a_refused_card_is_a_permanent_failure_with_feishus_code_logged(make_bot, caplog):
    bot = await make_bot()
    request = choice_request("Which region?", ["eu", "us"])
    item = ClarificationOut(request=request, fallback_text=render_text_fallback(request), token="tok-1")
    bot.api.fail_next(400, 230099, method="POST")  # "Failed to create card content"
    with caplog.at_level(logging.WARNING), pytest.raises(DeliveryFailed) as refused:
        await bot.adapter.send(P2P, item)
    assert refused.value.permanent and refused.value.code == "230099"
    assert len(bot.api.posted()) == 1  # a refusal is not retried
    assert any("230099" in r.getMessage() and "scripted failure" in r.getMessage() for r in caplog.records)


async def test_server_errors_and_rate_limits_are_transient_failures(make_bot):
    bot = await make_bot()
    bot.api.fail_next(503, 1, method="POST")
    with pytest.raises(DeliveryFailed) as unavailable:
        await bot.adapter.send(P2P, TextReply(text="hello"))
    assert not unavailable.value.permanent
    bot.api.fail_next(429, 99991400, method="POST", headers={"x-ogw-ratelimit-reset": "0"})
    with pytest.raises(DeliveryFailed) as limited:
        await bot.adapter.send(P2P, TextReply(text="hello"))
    assert not limited.value.permanent and limited.value.retry_after == 0.0
    assert limited.value.code == "99991400"


async def test_the_fake_refuses_what_feishu_refuses(make_bot):
    bot = await make_bot()
    with pytest.raises(DeliveryFailed) as refused:
        await bot.adapter.sender.post_message("oc_p2p", card_json(native_card(dropdown_form(), "tok")))
    assert refused.value.permanent and refused.value.code == "230099"
    ok = render_clarification(dropdown_form(), "tok", render_text_fallback(dropdown_form()))
    assert await bot.adapter.sender.post_message("oc_p2p", card_json(ok))


def test_the_cancel_of_the_text_form_dismisses_it():
    card = render_clarification(dropdown_form(), "tok", "Choose for each team?")
    assert payload(button(card, "Cancel")) == {"t": "tok", "a": "x", "l": "en"}


async def test_when_feishu_refuses_the_question_card_the_person_still_gets_the_question(make_bot):
    def asks(turn):
        if turn.response is not None:
            return TurnOutput(replies=[f"Going with {turn.response.value}."])
        request = choice_request("Which region?", ["eu", "us"])
        return TurnOutput(request=request, fallback_text=render_text_fallback(request))

    bot = await make_bot(ScriptedRunner(asks), progress_after_seconds=100)
    bot.api.fail_next(400, 230099, method="POST")  # Feishu will not show this card
    await bot.deliver(message_event("deploy"))
    await bot.gateway.drain()
    assert [c.status for c in bot.api.message_calls()] == [400, 200]  # refused once, then the text
    shown = bot.api.shown()[-1]
    assert is_text_fallback(shown) and "Which region?" in text_of(shown) and "1. eu" in text_of(shown)
    assert [c.text for c in bot.runner.calls] == ["deploy"]  # the agent did not run again

    await bot.deliver(message_event("2"))  # answered by a typed reply
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.value == "us" and "Going with us." in text_of(bot.api.shown()[-1])
