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
    with pytest.raises(BadRequest, match="(?i)message text is empty"):  # empty once parsed
        await bot.send_message(1, "<blockquote> </blockquote>", parse_mode="HTML")
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


async def test_drafts_are_for_private_chats_and_a_message_replaces_them(bot, bot_api):
    assert await bot.send_message_draft(1, 7, "<b>Half</b> an answer", parse_mode="HTML")
    assert await bot.send_message_draft(1, 7, "<b>Half</b> an answer, then more", parse_mode="HTML")
    assert bot_api.visible_drafts(1) == ["<b>Half</b> an answer, then more"]  # same draft_id: replaced
    assert await bot.send_message_draft(1, 8)  # no text: Telegram's "Thinking…" placeholder
    with pytest.raises(BadRequest, match="(?i)TEXTDRAFT_PEER_INVALID"):
        await bot.send_message_draft(-100500, 7, "in a group")
    with pytest.raises(BadRequest, match="(?i)non-zero"):
        await bot.send_message_draft(1, 0, "no id")
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message_draft(1, 7, "x" * 4097)
    with pytest.raises(BadRequest, match="(?i)can't parse entities"):
        await bot.send_message_draft(1, 7, "<b>open", parse_mode="HTML")
    await bot.send_message(1, "The answer")
    assert bot_api.visible_drafts(1) == []  # the bot's message took the drafts' place


async def test_deleting_needs_the_message_and_calls_carry_their_time(bot, bot_api):
    sent = await bot.send_message(-100500, "live")
    assert await bot.delete_message(-100500, sent.message_id)
    assert bot_api.shown(-100500, sent.message_id) is None
    with pytest.raises(BadRequest, match="(?i)message to delete not found"):
        await bot.delete_message(-100500, sent.message_id)
    first, second, third = bot_api.calls[-3:]
    assert first.at <= second.at <= third.at


async def test_a_method_can_be_made_to_fail_until_it_recovers(bot, bot_api):
    bot_api.fail_always("editMessageText", 400, description="Bad Request: message can't be edited")
    sent = await bot.send_message(1, "hi")
    for _ in range(2):
        with pytest.raises(BadRequest, match="(?i)can't be edited"):
            await bot.edit_message_text("hello", chat_id=1, message_id=sent.message_id)
    bot_api.recover("editMessageText")
    await bot.edit_message_text("hello", chat_id=1, message_id=sent.message_id)
    assert bot_api.shown(1, sent.message_id) == "hello"
