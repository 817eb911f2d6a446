"""The fake Bot API answers as Telegram does, as python-telegram-bot reads it."""

from __future__ import annotations

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, ChatMigrated, Forbidden

from .fake_bot_api import NOT_MODIFIED, QUERY_TOO_OLD


@pytest.fixture
async def bot(bot_api):
    async with Bot(bot_api.token, base_url=bot_api.base_url) as made:
        yield made


async def test_html_telegram_cannot_parse_is_refused(bot):
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        await bot.send_message(1, "<b>open", parse_mode="HTML")
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        await bot.send_message(1, "<div>x</div>", parse_mode="HTML")
    with pytest.raises(BadRequest, match="(?i)message text is empty"):
        await bot.send_message(1, " ")
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message(1, "x" * 4097)
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="x" * 65)]])
    with pytest.raises(BadRequest, match="(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(1, "hi", reply_markup=too_long)


async def test_edits_need_a_message_and_a_change(bot, bot_api):
    sent = await bot.send_message(1, "<b>hi</b>", parse_mode="HTML")
    with pytest.raises(BadRequest) as same:
        await bot.edit_message_text("<b>hi</b>", chat_id=1, message_id=sent.message_id, parse_mode="HTML")
    # PTB drops Telegram's "Bad Request: " and capitalizes what follows
    assert same.value.message.lower() == NOT_MODIFIED.removeprefix("Bad Request: ")
    await bot.edit_message_text("<b>hello</b>", chat_id=1, message_id=sent.message_id, parse_mode="HTML")
    bot_api.delete(1, sent.message_id)
    with pytest.raises(BadRequest, match="(?i)message to edit not found"):
        await bot.edit_message_text("again", chat_id=1, message_id=sent.message_id)


async def test_a_callback_query_is_answered_once(bot, bot_api):
    await bot.answer_callback_query("q1")
    with pytest.raises(BadRequest) as twice:
        await bot.answer_callback_query("q1")
    assert twice.value.message.lower() == QUERY_TOO_OLD.removeprefix("Bad Request: ").lower()
    bot_api.expired_queries.add("q2")
    with pytest.raises(BadRequest):
        await bot.answer_callback_query("q2")


async def test_blocked_chats_and_upgraded_groups(bot, bot_api):
    bot_api.block(1)
    with pytest.raises(Forbidden, match="(?i)blocked by the user"):
        await bot.send_message(1, "hi")
    bot_api.migrate(-5, -1005)
    with pytest.raises(ChatMigrated) as moved:
        await bot.send_message(-5, "hi")
    assert moved.value.new_chat_id == -1005
    assert (await bot.send_message(-1005, "hi")).chat.type == "supergroup"
