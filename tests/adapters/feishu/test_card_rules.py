"""Every card we send is one a real Feishu accepts: JSON 2.0 component rules and the 30 KB body."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.render import (
    CARD_LIMIT_BYTES,
    card_json,
    card_size,
    render_answered,
    render_clarification,
    render_notice,
    render_reply,
)
from clarigate.adapters.testing import ScriptedRunner, asking
from clarigate.agent.protocol import (
    FormField,
    HumanInputRequest,
    Option,
    normalize_request,
    render_text_fallback,
)

from .card_schema import check_card
from .cards import is_text_fallback, text_of
from .events import message_event
from .fake_open_api import CARD_BODY_LIMIT
from .test_render import TOKEN, tool_args, words


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_args, words)
def test_every_card_of_any_request_follows_the_component_rules(args, answer):
    request = normalize_request(args, "call-1")
    fallback = render_text_fallback(request)
    for card in (
        render_clarification(request, TOKEN, fallback),
        render_clarification(request, TOKEN, fallback, other_open=True),
        render_answered(request, f"✅ Answered by ou_abc123: {answer}", "ou_abc123"),
    ):
        check_card(card)
        assert card_size(card) <= CARD_LIMIT_BYTES


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=9000))
def test_replies_and_notices_follow_the_component_rules(text):
    for card in [*render_reply(text), render_notice(f"⚠️ {text[:300]}x")]:
        check_card(card)
        assert card_size(card) <= CARD_LIMIT_BYTES


def wide_form() -> HumanInputRequest:
    """Fifteen multi selects of 24 short options: under 28 KB of card JSON, over 30 KB once sent."""
    options = [Option(id=f"o-{i}", label=f"choice-{i:02d}", value=str(i)) for i in range(24)]
    fields = [
        FormField(name=f"field_{n}", label=f"Field {n}", type="multi_select", options=options)
        for n in range(15)
    ]
    return HumanInputRequest(
        request_id="clarification:wide", tool_call_id="wide", question="Tick all that apply?",
        input_mode="form", fields=fields,
    )  # fmt: skip


def test_the_size_measured_is_the_size_sent():
    card = render_clarification(wide_form(), TOKEN, "Tick all that apply?\n…")
    body = {"receive_id": "oc_" + "x" * 32, "msg_type": "interactive", "content": card_json(card)}
    body["uuid"] = "0" * 36
    assert len(json.dumps(body, ensure_ascii=False).encode()) <= CARD_BODY_LIMIT


async def test_a_form_too_wide_for_feishu_is_asked_as_text(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: asking(wide_form())))
    await bot.deliver(message_event("survey"))
    await bot.gateway.drain()
    refused = [c for c in bot.api.posted() if c.size > CARD_BODY_LIMIT]
    assert refused == [] and all(c.size <= CARD_BODY_LIMIT for c in bot.api.message_calls())
    shown = bot.api.shown()[-1]
    assert is_text_fallback(shown) and "Tick all that apply?" in text_of(shown)
