"""Files the agent sends, made into items the platform can take, or a short text saying why not.

Runs in the run step, before anything is recorded: a file named by URL is fetched here (the
gateway fetches it, capped while downloading: ``clarigate.gateway.flow.url_fetch``), so the
recorded item holds the bytes and a retried delivery sends the very same file. A file over the
platform's limit (``PlatformAdapter.file_limit``) or the bot's (``files_out.max_bytes``), an empty
one, one on a platform that cannot send files, or that cannot be had, becomes one short line for
the person instead: never dropped silently. A file the platform refuses when it is sent is said
too (its ``fallback_text``, sent by ``clarigate.gateway.flow.delivery``); a file recorded without
one (by an earlier version) gets it at delivery, in the job's language (``with_file_lines``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from clarigate.agent.outgoing_files import OutgoingFile, with_extension
from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import FileReply, TextReply
from clarigate.gateway.flow.attachments import megabytes
from clarigate.gateway.flow.notices import job_locale
from clarigate.gateway.flow.url_fetch import FetchRefused, FetchTooLarge, fetch_capped
from clarigate.gateway.runtime.config import FilesOut
from clarigate.gateway.store.records import Job

# the turn's log name: a file left out is part of what the turn did
log = logging.getLogger("clarigate.gateway.flow.turn")


async def file_items(
    outbox: Outbox, conv: Conversation, files: Sequence[OutgoingFile], rules: FilesOut, locale: Locale
) -> list[FileReply | TextReply]:
    """An item per file: the file to send, or the line that says why it is not sent."""
    items: list[FileReply | TextReply] = []
    for file in files:
        items.append(await _item(outbox, conv, file, rules, locale))
    return items


async def _item(
    outbox: Outbox, conv: Conversation, file: OutgoingFile, rules: FilesOut, locale: Locale
) -> FileReply | TextReply:
    probe = FileReply(name=file.name, mime_type=file.mime_type or "application/octet-stream", data=b"")
    probe = probe.model_copy(update={"image": file.image, "caption": file.caption})
    limit = outbox.adapter_for(conv.platform).file_limit(conv, probe)
    if limit <= 0:
        log.info("a file the agent made is not sent: %s cannot send files", conv.platform)
        return TextReply(text=ui_text("files_unsupported", locale, name=file.name))
    cap = min(limit, rules.max_bytes)
    data, served = file.data, ""
    try:
        if data is None and file.url:
            data, served = await fetch_capped(
                file.url, cap, allow_private=rules.allow_private_urls, seconds=rules.fetch_timeout_seconds
            )
        if data is None:
            raise FetchRefused("no bytes and no URL")
    except FetchTooLarge as exc:
        return _too_big(file.name, exc.size, cap, locale)
    except FetchRefused as exc:
        log.warning("a file the agent named could not be fetched: %s", exc)
        return TextReply(text=ui_text("file_unavailable", locale, name=file.name))
    if len(data) > cap:
        return _too_big(file.name, len(data), cap, locale)
    if not data:  # no platform takes an empty file
        log.info("a file the agent made is not sent: it is empty")
        return TextReply(text=ui_text("file_empty", locale, name=file.name))
    mime_type = file.mime_type or served or "application/octet-stream"
    name = with_extension(file.name, served) if served else file.name  # ``download`` -> ``download.pdf``
    refused = ui_text("file_refused", locale, name=name)
    return probe.model_copy(
        update={"data": data, "mime_type": mime_type, "name": name, "fallback_text": refused}
    )


def with_file_lines(items: list[Any], job: Job) -> list[Any]:
    """A recorded job's ``items``, each file recorded without its line (``fallback_text``, which
    earlier versions did not record) given it, in the language ``job``'s run gave its lines."""
    if all(item.fallback_text for item in items if isinstance(item, FileReply)):
        return items
    locale = job_locale(job)
    return [
        item.model_copy(update={"fallback_text": ui_text("file_refused", locale, name=item.name)})
        if isinstance(item, FileReply) and not item.fallback_text
        else item
        for item in items
    ]


def _too_big(name: str, size: int | None, cap: int, locale: Locale) -> TextReply:
    log.info("a file the agent made is not sent: %s bytes, over the cap of %d", size or "more", cap)
    shown = size_text(size) if size else f"> {size_text(cap)}"
    return TextReply(text=ui_text("file_too_big", locale, name=name, size=shown, cap=size_text(cap)))


def size_text(size: int) -> str:
    """A size as people read it: ``800 bytes``, ``12 KB``, ``20 MB``."""
    if size < 1024:
        return f"{size} bytes"
    if size < 2**20:
        return f"{size / 1024:.1f}".removesuffix(".0") + " KB"
    return megabytes(size)
