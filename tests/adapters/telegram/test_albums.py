"""An album (photos sent together: one update per item, one ``media_group_id``, usually one
caption) reaches the agent as one message with the caption and every photo, answered once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .conftest import redis_store
from .fake_bot_api import BOT_USER
from .harness import GROUP, message_update

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 64


def album(
    group_id: str, count: int, caption: str, chat: dict[str, Any] | None = None, at: int = 0, **kw: Any
) -> list:
    """The updates of an album of ``count`` photos, item ``at`` captioned ``caption``."""
    updates = []
    for n in range(count):
        photo = [
            {
                "file_id": f"{group_id}-{n}",
                "file_unique_id": f"u{group_id}-{n}",
                "width": 800,
                "height": 600,
                "file_size": len(PNG),
            }
        ]
        extra: dict[str, Any] = {"caption": caption, **kw} if n == at else {}
        updates.append(message_update(None, chat=chat, photo=photo, media_group_id=group_id, **extra))
    return updates


async def post_all(tg: Any, updates: list) -> None:
    """Post the updates one after the other, as Telegram does, then let the jobs finish."""
    for update in updates:
        assert (await tg.post(update)).status_code == 200
        await asyncio.sleep(0.05)
    await tg.gateway.drain()


@pytest.mark.parametrize(("store_kind", "at"), [("memory", 0), ("memory", 1), ("redis", 0)])
async def test_a_private_album_is_one_request_with_its_caption_and_every_photo(
    bench, redis_prefix, store_kind, at
):
    store = redis_store(redis_prefix) if store_kind == "redis" else None
    try:
        await _private_album(await bench(ScriptedRunner(), store=store), at)
    finally:
        if store is not None:
            await store.close()


async def _private_album(tg: Any, at: int) -> None:
    runner = tg.runner
    updates = album("9001", 3, "compare these", at=at)
    for n in range(3):
        tg.api.add_file(f"9001-{n}", PNG)
    await post_all(tg, updates)
    assert len(runner.calls) == 1
    assert runner.calls[0].text.startswith("compare these")
    assert len(runner.calls[0].images) == 3
    assert len(tg.api.of("sendMessage")) == 1

    await post_all(tg, updates)  # Telegram delivering the album again
    assert len(runner.calls) == 1
    assert len(tg.api.of("sendMessage")) == 1


async def test_a_group_album_asked_with_a_command_caption_is_one_request_with_every_photo(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    command = f"/ask@{BOT_USER['username']}"
    caption = f"{command} which one is sharper?"
    entities = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    for n in range(3):
        tg.api.add_file(f"9002-{n}", PNG)
    await post_all(tg, album("9002", 3, caption, chat=GROUP, caption_entities=entities))
    assert len(runner.calls) == 1
    assert runner.calls[0].text.startswith("which one is sharper?")
    assert len(runner.calls[0].images) == 3
    assert len(tg.api.of("sendMessage")) == 1
