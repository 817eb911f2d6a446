"""Telegram: a streamed lead, then a question with text shown above it (an approval's calls in full)."""

from __future__ import annotations

from tests.gateway.flow.test_live_shown_above import LEAD, AskingAfterLead

from .harness import mention_update
from .test_live import GROUP_ID


async def test_telegram_a_streamed_lead_then_a_question_with_text_above_keeps_the_lead(bench, quick_groups):  # type: ignore[no-untyped-def]
    tg = await bench(AskingAfterLead())
    await tg.deliver(mention_update("clean it"))
    shown = [tg.api.shown(GROUP_ID, m.result["message_id"]) for m in tg.api.of("sendMessage")]
    # the live message keeps the lead; the calls in full and the question follow, in that order
    assert shown[0] == LEAD, shown
    assert shown[1] == "<pre>delete_rows(table='events', older_than='30d')</pre>", shown
    assert len(shown) == 3 and "Run these?" in shown[2], shown
