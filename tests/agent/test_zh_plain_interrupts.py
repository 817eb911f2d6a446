"""A graph's own ``interrupt("…")`` in a Chinese conversation: the graph's text is fixed in its
code (often English), but the buttons, prompts and closing lines around it are the person's."""

from __future__ import annotations

from clarigate.agent.interrupts import asked_for
from clarigate.agent.protocol.catalog import text
from clarigate.agent.protocol.fallback import render_text_fallback


def test_an_english_interrupt_in_a_chinese_conversation_is_asked_in_chinese_words():
    request = asked_for("i-1", {"question": "Which region?", "options": ["us-east", "eu-west"]}, "zh").request

    assert request.locale == "zh"
    assert render_text_fallback(request).endswith(text("reply_choice", "zh"))


def test_a_bare_english_interrupt_in_a_chinese_conversation_too():
    request = asked_for("i-2", "What should the release be called?", "zh").request

    assert request.locale == "zh"


def test_a_chinese_interrupt_in_an_english_conversation_stays_chinese():
    request = asked_for("i-3", {"question": "部署到哪个区域？", "options": ["华东", "华北"]}, "en").request

    assert request.locale == "zh"


def test_an_english_interrupt_in_an_english_conversation_stays_english():
    assert asked_for("i-4", "Which region?", "en").request.locale == "en"


def test_an_english_risk_interrupt_in_a_chinese_conversation_offers_chinese_buttons():
    value = {"question": "Delete the database?", "clarification_type": "risk_confirmation"}
    request = asked_for("i-5", value, "zh").request

    assert [o.label for o in request.options] == [text("confirm", "zh"), text("cancel", "zh")]
