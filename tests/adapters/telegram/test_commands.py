"""Commands are commands: Telegram's syntax mapped onto the gateway's neutral commands."""

from __future__ import annotations

import json

from clarigate.adapters.telegram.markup import html_to_plain
from clarigate.adapters.testing import ScriptedRunner

from .harness import ALICE, GROUP, bot_message, command_update, message_update


async def test_the_menu_is_registered_at_start(bench):
    tg = await bench()
    menus = {
        c.params.get("language_code"): json.loads(c.params["commands"]) for c in tg.api.of("setMyCommands")
    }
    assert set(menus) == {None, "zh"}
    assert [c["command"] for c in menus[None]] == ["ask", "new", "cancel", "status", "help"]
    assert all(c["description"] for menu in menus.values() for c in menu)


async def test_the_menu_spells_ask_with_the_bots_own_name(bench):
    tg = await bench()  # getMe: @clari_bot
    menus = {
        c.params.get("language_code"): json.loads(c.params["commands"]) for c in tg.api.of("setMyCommands")
    }
    asks = {language: next(c for c in menu if c["command"] == "ask") for language, menu in menus.items()}
    assert "/ask@clari_bot …" in asks[None]["description"]
    assert "/ask@clari_bot …" in asks["zh"]["description"]
    assert not any("@bot " in a["description"] for a in asks.values())


async def test_commands_reach_the_core_as_neutral_commands(bench):
    tg = await bench(ScriptedRunner())
    accepted, _ = tg.record()
    for command in (
        "/start",
        "/start ref-42",  # a deep link t.me/clari_bot?start=ref-42
        "/help",
        "/HELP@Clari_Bot",
        "/status",
        "/cancel",
        "/new@clari_bot",
    ):
        await tg.deliver(command_update(command))
    assert [m.text for m in accepted] == [
        "/start",
        "/start ref-42",
        "/help",
        "/help",
        "/status",
        "/cancel",
        "/new",
    ]
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Started a new conversation")


async def test_another_bots_command_is_ignored_everywhere(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    tg.new_calls()
    await tg.deliver(command_update("/help@other_bot"))
    await tg.deliver(command_update("/new@other_bot", chat=GROUP))
    await tg.deliver(command_update("/deploy", chat=GROUP))  # a bare command we do not have, in a group
    assert accepted == [] and runner.calls == []
    assert tg.new_calls() == []


async def test_in_a_group_ask_starts_a_conversation_and_a_reply_continues_it(bench):
    # Telegram's default privacy mode delivers commands addressed to the bot and replies to it
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    await tg.deliver(command_update("/ask@clari_bot deploy the docs", chat=GROUP))
    answer = tg.api.of("sendMessage")[-1]
    assert answer.params["chat_id"] == str(GROUP["id"])
    replied = bot_message(answer.result["message_id"], GROUP)
    await tg.deliver(message_update("and the api", chat=GROUP, reply_to=replied))
    await tg.deliver(command_update("/ask@clari_bot", chat=GROUP))  # nothing asked: how to use the bot
    assert [m.text for m in accepted] == ["deploy the docs", "and the api", "/help"]
    assert runner.calls[0].thread_id == runner.calls[1].thread_id


async def test_a_command_is_never_an_answer_and_unknown_commands_in_private_are_text(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    await tg.deliver(command_update("/deploy now"))
    assert [m.text for m in accepted] == ["/deploy now"]
    assert accepted[0].sender.user_id == str(ALICE["id"])


async def test_language_code_chooses_the_words_when_the_text_has_no_signal(bench):
    tg = await bench(ScriptedRunner())
    chinese = {**ALICE, "language_code": "zh-hans"}
    await tg.deliver(command_update("/new", user=chinese))
    assert tg.api.of("sendMessage")[-1].params["text"] == "已开始新的对话。有什么可以帮您？"
    await tg.deliver(command_update("/new", user={**ALICE, "language_code": "en"}))
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Started a new conversation")
    await tg.deliver(command_update("/new start over please", user=chinese))  # words say English
    assert tg.api.of("sendMessage")[-2].params["text"].startswith("Started a new conversation")


async def test_the_words_after_new_are_the_new_conversations_first_message(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the docs"))
    old_thread = runner.calls[0].thread_id

    await tg.deliver(command_update("/new what changed in the last release?"))

    started, answer = (c.params["text"] for c in tg.api.of("sendMessage")[-2:])
    assert started.startswith("Started a new conversation")
    first = runner.calls[1]
    assert first.thread_id != old_thread
    assert first.text == "what changed in the last release?"
    assert answer.startswith("You said: what changed in the last release?")
    tg.new_calls()
    await tg.deliver(command_update("/new"))  # alone: the new conversation waits for a message
    assert len(runner.calls) == 2
    (sent,) = (c.params["text"] for c in tg.new_calls() if c.method == "sendMessage")
    assert sent.startswith("Started a new conversation")


#: One command's description, as every platform and the terminal word it.
CANCEL_EN = "dismiss the open question, or stop the request in progress"
CANCEL_ZH = "取消待回答的问题，或停止进行中的请求"


async def test_the_menu_describes_each_command_as_help_does(bench):
    tg = await bench(ScriptedRunner())
    menus = {
        c.params.get("language_code"): json.loads(c.params["commands"]) for c in tg.api.of("setMyCommands")
    }
    described = {language: {c["command"]: c["description"] for c in menu} for language, menu in menus.items()}
    assert described[None]["cancel"] == CANCEL_EN and described["zh"]["cancel"] == CANCEL_ZH
    await tg.deliver(command_update("/help"))
    help_text = tg.api.of("sendMessage")[-1].params["text"]
    for name in ("new", "cancel", "status", "help"):
        assert f"/{name} — {described[None][name]}" in help_text


async def test_help_after_a_chinese_message_answers_in_chinese(bench):
    tg = await bench(ScriptedRunner())  # Alice's app reports no language: her words decide
    await tg.deliver(message_update("帮我写一份周报"))
    await tg.deliver(command_update("/help"))
    help_text = tg.api.of("sendMessage")[-1].params["text"]
    assert help_text.startswith("直接告诉我您需要什么。")
    assert f"/cancel — {CANCEL_ZH}" in help_text
    await tg.deliver(message_update("now in English, please"))
    await tg.deliver(command_update("/help"))
    assert f"/cancel — {CANCEL_EN}" in tg.api.of("sendMessage")[-1].params["text"]


async def test_an_unknown_command_addressed_to_us_keeps_its_words_apart(bench):
    # /foo@clari_bot is addressed to us but is no command we have: the agent reads "/foo hello there"
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    await tg.deliver(command_update("/foo@clari_bot hello there", chat=GROUP))
    await tg.deliver(command_update("/Deploy@Clari_Bot"))
    assert [m.text for m in accepted] == ["/foo hello there", "/Deploy"]
    assert runner.calls[0].text.startswith("/foo hello there")


async def test_a_photo_captioned_with_ask_is_a_request_about_the_photo(bench):
    # Telegram marks a caption's command in caption_entities, as it does a text's in entities
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    caption = "/ask@clari_bot what is this diagram?"
    photo = [{"file_id": "p1", "file_unique_id": "up1", "width": 800, "height": 600, "file_size": 50_000}]
    entities = [{"type": "bot_command", "offset": 0, "length": len("/ask@clari_bot")}]
    update = message_update(None, chat=GROUP, photo=photo, caption=caption, caption_entities=entities)
    await tg.deliver(update)
    assert [m.text for m in accepted] == ["what is this diagram?"]
    assert [a.ref for a in accepted[0].attachments] == ["p1"]
    assert runner.calls[0].text.startswith("what is this diagram?")
    caption_new = message_update(
        None,
        chat=GROUP,
        photo=photo,
        caption="/new@clari_bot",
        caption_entities=[{"type": "bot_command", "offset": 0, "length": len("/new@clari_bot")}],
    )
    await tg.deliver(caption_new)
    assert accepted[-1].text == "/new"


async def test_help_and_start_in_a_group_say_how_privacy_mode_lets_people_write(bench):
    # the bot in a group sees only commands to it and replies to it: "just write" cannot work there
    tg = await bench(ScriptedRunner())
    await tg.deliver(command_update("/help@clari_bot", chat=GROUP))
    await tg.deliver(command_update("/start@clari_bot", chat=GROUP))
    await tg.deliver(command_update("/help@clari_bot", chat=GROUP, user={**ALICE, "language_code": "zh"}))
    sent = tg.api.of("sendMessage")[-3:]
    group_help, group_start, group_zh = (html_to_plain(c.params["text"]) for c in sent)
    assert group_help.startswith("In this group, start with /ask@clari_bot …")
    assert "or reply to one of my messages" in group_help and "Just write" not in group_help
    assert group_start.startswith("👋") and "/ask@clari_bot deploy the docs" in group_start
    assert group_zh.startswith("在本群中，请用 /ask@clari_bot … 开始")
    await tg.deliver(command_update("/help"))  # a private chat: writing is all it takes
    assert tg.api.of("sendMessage")[-1].params["text"].startswith("Just write what you need.")
