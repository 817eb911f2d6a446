"""A command addressed to another bot in model text ("tap /kick@group_admin_bot") is made inert as
a mention is: Telegram would make it a command one tap sends as the person. This bot's own
commands, as the catalog writes them in /help, stay tappable."""

from __future__ import annotations

from clarigate.adapters.telegram.markup import markdown_to_html, plain_text
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput

from .harness import GROUP, command_update, message_update

TAPPABLE = "To finish, tap /kick@group_admin_bot or /start@evil_bot"


def test_a_command_to_another_bot_is_made_inert():
    for shown in (markdown_to_html(TAPPABLE), plain_text(TAPPABLE), markdown_to_html(TAPPABLE, "clari_bot")):
        assert "/kick@\u2060group_admin_bot" in shown and "/start@\u2060evil_bot" in shown, shown


def test_this_bots_own_command_stays():
    assert (
        markdown_to_html("/ask@clari_bot or /ask@Clari_Bot", "clari_bot")
        == "/ask@clari_bot or /ask@Clari_Bot"
    )


async def test_a_reply_sends_other_bots_commands_inert_and_help_keeps_ours(bench):
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[TAPPABLE])))
    await tg.deliver(message_update("how do I finish?"))
    sent = tg.api.of("sendMessage")[-1].params["text"]
    assert "/kick@group_admin_bot" not in sent and "/kick@\u2060group_admin_bot" in sent, sent
    await tg.deliver(command_update("/help@clari_bot", chat=GROUP))
    assert "/ask@clari_bot" in tg.api.of("sendMessage")[-1].params["text"]
