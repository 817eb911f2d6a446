"""Feishu failing to tell the bot its own open_id at start (``bot/v3/info`` answering 5xx) must not
leave the bot taking every mention for its own until a restart.

The identity is asked for again in the background until Feishu answers; meanwhile ``/readyz``
says Feishu is still starting, and why, and no group message counts as addressed to the bot: not
an "@所有人" announcement (``@_all``, empty ids) nor a member mentioning another. A group message
with mentions is not dropped either: it is answered 503, so that Feishu pushes it again, and read
once the identity is known. A refusal (a 4xx, which no retry changes) is not asked again:
``/readyz`` says Feishu failed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from clarigate.adapters.feishu import startup
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.retry import RetryPolicy

from .cards import text_of
from .events import TENANT, message_event

INFO = "/bot/v3/info"
TOKEN = "/auth/v3/tenant_access_token/internal"
#: "@所有人" as Feishu pushes it to the bots of the group: its key, with empty ids.
EVERYONE = {"key": "@_all", "id": {"open_id": "", "union_id": "", "user_id": ""}, "name": "所有人"}
BOT = {"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "clarigate", "tenant_key": TENANT}
CAROL = {"key": "@_user_2", "id": {"open_id": "ou_carol"}, "name": "Carol", "tenant_key": TENANT}
GROUP = {"chat": "oc_team", "chat_type": "group"}


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """The identity asked again 0.1 s after a failure, at most 0.4 s apart (the policy's shape, its
    waits short enough for a test)."""
    monkeypatch.setattr(startup, "IDENTITY_RETRIES", RetryPolicy(first=0.1, cap=0.4))


def in_group(text: str, *mentions: dict[str, Any], **event: Any) -> dict[str, Any]:
    """A group message saying ``text`` (mention keys and all), with ``mentions``."""
    made = message_event("", **GROUP, **event)
    made["event"]["message"].update(content=json.dumps({"text": text}), mentions=list(mentions))
    return made


async def ready(bot: Any) -> bool:
    return (await bot.http.get("/readyz")).status_code == 200


async def until(check: Callable[[], Any], seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not await check():  # noqa: ASYNC110 (what /readyz says, polled as a prober does)
            await asyncio.sleep(0.05)


async def test_an_announcement_to_everyone_is_not_answered_while_feishu_withholds_the_bots_identity(
    make_bot, fake_api
):
    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)  # Feishu's open API down at start
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    announcements = (
        in_group("@_all 周五团建，请大家报名"),  # "@所有人" left out of ``mentions``
        in_group("@_all 周五前填表", EVERYONE),
        in_group("@_user_2 can you check the backups?", CAROL),  # a member talking to another
    )

    # which mention is the bot's cannot be told yet: those with mentions are left for Feishu to push again
    assert [(await bot.deliver(event)).status_code for event in announcements] == [200, 503, 503]
    await bot.gateway.drain()
    assert runner.calls == [] and bot.api.posted() == []  # the bot stayed out of it

    fake_api.failures.clear()  # Feishu answers again: the bot learns who it is, no restart
    await until(lambda: ready(bot))
    assert [(await bot.deliver(event)).status_code for event in announcements[1:]] == [
        200,
        200,
    ]  # pushed again
    await bot.deliver(in_group("@_user_1 deploy it", BOT, CAROL))
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["deploy it"]
    assert "You said: deploy it" in text_of(bot.api.shown()[-1])


async def test_a_group_message_to_the_bot_while_its_identity_is_unknown_is_pushed_again_and_answered(
    make_bot, fake_api, caplog
):
    """Feishu pushes an event not answered 200 again (15 s, 5 min, 1 h, 6 h later): "@bot do X"
    met while the identity is unknown is answered 503 and taken when pushed again, once; the
    messages left for later are said once at WARNING, and once when the identity is known."""
    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)
    runner = ScriptedRunner()
    to_bot = in_group("@_user_1 deploy it", BOT)
    with caplog.at_level(logging.DEBUG, logger="clarigate.adapters.feishu"):
        bot = await make_bot(runner)
        answers = [await bot.deliver(to_bot), await bot.deliver(in_group("@_user_1 and the docs", BOT))]
        await bot.gateway.drain()
        assert [a.status_code for a in answers] == [503, 503]
        assert answers[0].headers["retry-after"] == "15" and "identity" in answers[0].json()["error"]
        assert runner.calls == [] and bot.api.posted() == []

        fake_api.failures.clear()
        await until(lambda: ready(bot))
        pushes = [await bot.deliver(to_bot), await bot.deliver(to_bot)]  # pushed again, then a duplicate
        await bot.gateway.drain()
    assert [a.status_code for a in pushes] == [200, 200]
    assert [c.text for c in runner.calls] == ["deploy it"]  # once
    assert "You said: deploy it" in text_of(bot.api.shown()[-1])
    said = [r for r in caplog.records if r.name == "clarigate.adapters.feishu.receive"]
    assert [r.levelno for r in said] == [logging.WARNING, logging.DEBUG, logging.INFO], said
    assert "Feishu pushes them again" in said[0].getMessage() and said[0].exc_info is None
    assert "(2 left for it to push again)" in said[-1].getMessage()


async def test_a_group_message_to_the_bot_on_feishus_last_push_is_taken_though_the_identity_is_unknown(
    make_bot, fake_api
):
    """Feishu pushes an event again at most 4 times, the last about 6 h after the first: when the
    bot's identity is still unknown then, "@bot do X" is taken (addressed to the bot) rather than
    lost, while a message written since is still left for Feishu to push again."""
    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)  # Feishu withholds it all along
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    fresh, last_push = in_group("@_user_1 and the docs", BOT), in_group("@_user_1 deploy it", BOT)
    written = int(time.time() * 1000) - 6 * 3600 * 1000 - 15_000  # six hours and 15 s ago
    last_push["header"]["create_time"] = str(written)
    last_push["event"]["message"]["create_time"] = str(written)
    assert [(await bot.deliver(event)).status_code for event in (fresh, last_push)] == [503, 200]
    await bot.gateway.drain()
    [taken] = runner.calls
    assert "deploy it" in taken.text and "docs" not in taken.text
    assert "deploy it" in text_of(bot.api.shown()[-1])  # answered in the group


async def test_readyz_says_feishu_is_starting_and_why_until_the_bots_identity_is_known(make_bot, fake_api):
    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)
    bot = await make_bot()

    response = await bot.http.get("/readyz")
    assert response.status_code == 503
    said = response.json()["starting"]["feishu"]
    assert said.startswith("starting (") and "identity" in said, said
    await asyncio.sleep(0.8)
    assert len([c for c in fake_api.calls if c.path.endswith(INFO)]) > 2  # asked again meanwhile

    fake_api.failures.clear()
    await until(lambda: ready(bot))
    assert bot.adapter.receiver.bot_open_id == "ou_bot"


async def test_a_refusal_of_the_bots_identity_is_not_asked_again_and_readyz_says_it_failed(
    make_bot, fake_api
):
    fake_api.fail_next(400, 99991672, times=10_000, path_part=INFO)  # refused: no retry changes it
    bot = await make_bot()
    await asyncio.sleep(0.5)

    assert len([c for c in fake_api.calls if c.path.endswith(INFO)]) == 1
    response = await bot.http.get("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"]["feishu"].startswith("failed ("), response.text


async def test_a_wrong_app_secret_is_not_asked_again_and_readyz_says_it_failed(make_bot, fake_api, caplog):
    """Feishu's tenant-token endpoint refusing the App Secret (code 10014) is a refusal, not an
    outage: asking again cannot mend it, so the start fails as the README says, naming the setting."""
    fake_api.app_secret = "the-secret-after-a-reset"  # the bot still has the old one
    with caplog.at_level(logging.INFO):
        bot = await make_bot()
        await asyncio.sleep(0.5)

    assert len([c for c in fake_api.calls if c.path.endswith(TOKEN)]) == 1
    response = await bot.http.get("/readyz")
    assert response.status_code == 503
    assert response.json()["failed"]["feishu"].startswith("failed ("), response.text
    (error,) = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert "code 10014" in error and "FEISHU_APP_SECRET" in error, error


@pytest.mark.parametrize("outage", ["a 5xx", "the network"])
async def test_each_ask_again_is_one_short_line(make_bot, fake_api, caplog, unused_tcp_port, outage):
    """While the identity is asked again, each failed ask is one line, its reason short (not
    urllib3's nested text), beside the one-line record of each platform call."""
    settings = {}
    if outage == "a 5xx":
        fake_api.fail_next(500, 1, times=10_000, path_part=INFO)
    else:
        settings = {"domain": f"http://127.0.0.1:{unused_tcp_port}"}  # nothing listens there
    with caplog.at_level(logging.INFO):
        await make_bot(settings=settings)
        await asyncio.sleep(0.8)

    asks = [
        r for r in caplog.records if r.name == "clarigate.gateway.platform_calls" and INFO in r.getMessage()
    ]
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("clarigate.adapters.feishu")]
    assert len(asks) > 2
    assert len(asks) - 1 <= len(lines) <= len(asks), lines
    assert all("asked again" in line and len(line) < 300 for line in lines), lines
    assert not any("HTTPConnectionPool" in line or "Max retries" in line for line in lines), lines
