"""Albums: several photos or files sent together reach the agent as one message.

Telegram delivers an album as one update per item, sharing ``media_group_id``; usually one item
carries the caption. Each item is noted on arrival (``note_item``, in the shared state, before the
ack: nothing is lost if a process dies), and each item accepted as a job is as any message is. The
jobs of a chat thread run in order, so the album's first job runs first: where it runs
(``gather``, from ``complete_message``) it waits until the album has been quiet a moment, then
takes every item noted so far, its caption and all attachments, into its one message. A later
item's job finds its item taken and runs nothing (no reply); an item arriving after the album was
taken runs as a message of its own. In a group only the addressed item (``/ask@bot`` or a mention
in the caption) is accepted; the others are noted, and taken with it.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager
from typing import Any

from telegram import Message

from clarigate.adapters.leases import held
from clarigate.gateway.boundary.messages import Attachment, InboundMessage
from clarigate.gateway.boundary.port import AdapterState

#: How long an album's record is kept (seconds): far longer than its jobs wait.
ALBUM_TTL = 24 * 3600
#: The album is taken once no item came for this long (seconds) …
QUIET = 1.0
#: … or this long after its first job began waiting (seconds), whichever comes first.
MOST_WAIT = 3.0
_POLL = 0.2
_LEASE_SECONDS = 5
_LEASE_WAIT = 2 * _LEASE_SECONDS


def _album_key(message: Message) -> str:
    return f"album:{message.chat_id}:{message.media_group_id}"


def _item_key(event_id: str) -> str:
    return f"album-item:{event_id}"


async def note_item(
    state: AdapterState,
    message: Message,
    event_id: str,
    text: str,
    attachments: list[Attachment],
    new_request: bool = False,
) -> None:
    """Note an album item (``text``: its caption as the gateway gets it, ``/ask``'s words alone and
    ``new_request`` for ``/ask …``) in its album's record; an item noted already (a redelivery) is
    left as it was. Nothing for a message of no album."""
    if not message.media_group_id:
        return
    key = _album_key(message)
    await state.set_json(_item_key(event_id), key, ALBUM_TTL)
    item = {
        "text": text,
        "attachments": [a.model_dump(mode="json") for a in attachments],
        "new_request": new_request,
    }
    async with _locked(state, key):
        album = await state.get_json(key) or {"items": {}, "taken": {}}
        if str(message.message_id) not in album["items"]:
            album["items"][str(message.message_id)] = item
            album["changed"] = time.time()
            await state.set_json(key, album, ALBUM_TTL)


async def gather(state: AdapterState, message: InboundMessage) -> InboundMessage | None:
    """``message`` with every item of its album not taken yet (the first caption said, all the
    attachments); None when another item's message took it. Unchanged when of no album."""
    key = await state.get_json(_item_key(message.event_id))
    mine = message.message_id
    if not isinstance(key, str) or mine is None:
        return message
    album = await state.get_json(key)
    if not isinstance(album, dict):
        return message
    taker = album["taken"].get(mine)
    if taker is None:
        await _quiet(state, key)
        async with _locked(state, key):
            album = await state.get_json(key) or album
            taker = album["taken"].get(mine)
            if taker is None:
                taker = mine
                for item_id in album["items"]:
                    album["taken"].setdefault(item_id, mine)
                await state.set_json(key, album, ALBUM_TTL)
    if taker != mine:
        return None
    return _joined(message, album)


def _joined(message: InboundMessage, album: dict[str, Any]) -> InboundMessage:
    """The message with the items it took: its own text, else the first caption among them (an
    ``/ask …`` caption a new request, as that item alone would be)."""
    mine = message.message_id
    taken = sorted(int(i) for i, t in album["taken"].items() if t == mine)
    items = [album["items"][str(i)] for i in taken if str(i) in album["items"]]
    text, new_request = message.text, message.new_request
    captioned = next((item for item in items if item["text"].strip()), None)
    if not text.strip() and captioned is not None:
        text, new_request = captioned["text"], bool(captioned.get("new_request"))
    attachments = [Attachment.model_validate(a) for item in items for a in item["attachments"]]
    update = {"text": text, "new_request": new_request, "attachments": attachments or message.attachments}
    return message.model_copy(update=update)


async def _quiet(state: AdapterState, key: str) -> None:
    """Wait until no item joined the album for ``QUIET`` seconds, at most ``MOST_WAIT``."""
    deadline = time.monotonic() + MOST_WAIT
    while time.monotonic() < deadline:
        album = await state.get_json(key)
        changed = album.get("changed", 0.0) if isinstance(album, dict) else 0.0
        if time.time() - changed >= QUIET:
            return
        await asyncio.sleep(_POLL)


def _locked(state: AdapterState, key: str) -> AbstractAsyncContextManager[None]:
    """The album's record held by this step alone (a lease; one a dead process held expires)."""
    return held(
        state, f"lock:{key}", lease_seconds=_LEASE_SECONDS, wait_seconds=_LEASE_WAIT, poll_seconds=0.02
    )
