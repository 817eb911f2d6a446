"""Slack: a streamed lead, then a question with text shown above it (an approval's calls in full)."""

from __future__ import annotations

from tests.gateway.flow.test_live_shown_above import LEAD, AskingAfterLead

from .conftest import MakeWorld


async def test_slack_a_streamed_lead_then_a_question_with_text_above_reads_right(make_world: MakeWorld):
    world = await make_world(AskingAfterLead())
    await world.user.mention("clean it")
    await world.settle()
    texts = [m["text"] for m in world.fake.shown() if m.get("text") != "clean it"]
    # the lead as streamed, whole; then the calls in full; then the question, each its own message
    assert texts[0] == LEAD, texts
    assert "delete_rows(table='events', older_than='30d')" in texts[1] and LEAD not in texts[1], texts
    assert len(texts) == 3 and "Run these?" in texts[2], texts
