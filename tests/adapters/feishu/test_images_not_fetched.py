"""A photo Feishu will not let the bot download (the app lacks ``im:resource``: code 99991672; the
resource gone: 234003) is not passed over in silence: the person is told the bot could not open
it, the agent that it could not be loaded, and the missing scope is logged once. A photo that
downloads still reaches the agent as before."""

from __future__ import annotations

import json
import logging
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .cards import text_of
from .events import message_event

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 100
NOT_OPENED = "I could not open image you sent, so I have not seen it."


def agent(turn: Turn) -> TurnOutput:
    return TurnOutput(replies=[f"Got: {turn.text}"])


def photo(message_id: str, key: str) -> dict[str, Any]:
    """An ``image`` message as Feishu documents its content (``{"image_key": …}``)."""
    event = message_event("", message_id=message_id)
    event["event"]["message"].update(message_type="image", content=json.dumps({"image_key": key}))
    return event


async def test_a_photo_feishu_refuses_is_told_to_the_person_and_the_agent(make_bot, caplog):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    bot.api.resources[("om_img3", "img_v3_k1")] = ("image", PNG, "image/png")
    bot.api.fail_next(400, 99991672, path_part="/resources/")  # the app lacks im:resource
    with caplog.at_level(logging.WARNING, logger="clarigate.adapters.feishu"):
        await bot.deliver(photo("om_img3", "img_v3_k1"))
        await bot.gateway.drain()
        bot.api.fail_next(400, 99991672, path_part="/resources/")
        await bot.deliver(photo("om_img4", "img_v3_k1"))
        await bot.gateway.drain()

    first = bot.runner.calls[0]
    assert first.images == ()
    assert "(attached: image — could not be loaded)" in first.text  # the agent knows it saw nothing
    told = [text_of(card) for card in bot.api.shown()]
    assert told[:2] == [NOT_OPENED, "Got: (attached: image — could not be loaded)"]  # the person, first
    assert told.count(NOT_OPENED) == 2  # once for each message
    scope = [r for r in caplog.records if "im:resource" in r.getMessage()]
    assert len(scope) == 1  # the scope to grant, said once


async def test_a_photo_gone_from_feishu_is_told_in_the_persons_language(make_bot):
    bot = await make_bot(ScriptedRunner(agent), progress_after_seconds=100)
    await bot.deliver(message_event("帮我看看这个报错", message_id="om_ask"))
    await bot.gateway.drain()
    await bot.deliver(photo("om_gone", "img_v3_gone"))  # nothing in ``resources``: Feishu's 234003
    await bot.gateway.drain()
    assert bot.runner.calls[-1].images == ()
    told = [text_of(card) for card in bot.api.shown()]
    assert "无法打开您发送的 图片，因此我没有看到它。" in told


async def test_a_photo_that_downloads_still_reaches_the_agent(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    bot.api.resources[("om_img5", "img_v3_k5")] = ("image", PNG, "image/png")
    await bot.deliver(photo("om_img5", "img_v3_k5"))
    await bot.gateway.drain()
    [seen] = bot.runner.calls[-1].images
    assert seen.data == PNG and "(attached: image)" in bot.runner.calls[-1].text
    assert [text_of(card) for card in bot.api.shown()] == ["Got: (attached: image)"]  # no note
