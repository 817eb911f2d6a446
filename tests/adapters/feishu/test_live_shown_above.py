"""Feishu: a streamed lead, then a question with text shown above it (an approval's calls in full)."""

from __future__ import annotations

from tests.gateway.flow.test_live_shown_above import LEAD, AskingAfterLead

from .cards import is_interactive, text_of
from .events import message_event


async def test_feishu_a_streamed_lead_then_a_question_with_text_above_keeps_the_lead(make_bot):  # type: ignore[no-untyped-def]
    bot = await make_bot(AskingAfterLead())
    await bot.deliver(message_event("clean it"))
    await bot.gateway.drain(timeout=20)
    live, above, question = bot.api.shown()
    # the live card keeps the lead as streamed; the calls in full and the question follow
    assert text_of(live) == LEAD and not is_interactive(live)
    assert "delete_rows(table='events', older_than='30d')" in text_of(above) and LEAD not in text_of(above)
    assert "Run these?" in text_of(question) and is_interactive(question)
    assert [e.streaming for e in bot.api.entities.values()] == ["off"]  # no cursor left on the lead
