"""Files the agent sends: the image and file blocks of its final message and of its tools' artifacts.

LangChain's standard content blocks (langchain-core 1.x, ``ImageContentBlock`` and
``FileContentBlock``): ``{"type": "image" | "file", "base64": …, "mime_type": …}`` or
``{"type": …, "url": …}``, the name in ``filename`` or ``extras["filename"]`` (as
``create_file_block(..., filename=…)`` puts it); the older ``source_type`` shape
(``{"type": "image", "source_type": "base64", "data": …}``) and OpenAI's ``image_url`` with a
``data:`` URL are read too. A block that names a provider's file store only (``file_id``) has
nothing to send and is left out.

A tool returns files with ``response_format="content_and_artifact"``: the content is what the
model reads, the artifact a block or a list of blocks (or ``{"files": [...]}``) sent to the
person. Nothing here fetches: a URL is fetched by the gateway, with its own cap and rules.
"""

from __future__ import annotations

import base64
import binascii
import logging
import mimetypes
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

log = logging.getLogger(__name__)

#: Files one turn sends at most (the rest are left out, with a log line).
MAX_FILES = 10
#: The longest file name sent (characters): a longer one is shortened, its extension kept.
MAX_NAME = 200


@dataclass(frozen=True)
class OutgoingFile:
    """A file or image for the person: its bytes (``data``) or a URL the gateway fetches."""

    name: str
    mime_type: str = ""
    data: bytes | None = None
    url: str | None = None
    image: bool = False
    caption: str = ""


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _name(block: Mapping[str, Any], mime_type: str, image: bool, number: int) -> str:
    extras, metadata = _mapping(block.get("extras")), _mapping(block.get("metadata"))
    for found in (block.get("filename"), block.get("name"), extras.get("filename"), metadata.get("filename")):
        if isinstance(found, str) and found.strip():
            return short_name(found.strip().replace("/", "_").replace("\\", "_"))
    extension = mimetypes.guess_extension(mime_type) or ("" if image else ".bin")
    return f"{'image' if image else 'file'}-{number}{extension}"


def short_name(name: str) -> str:
    """``name`` within ``MAX_NAME`` characters: its stem shortened, its extension kept."""
    if len(name) <= MAX_NAME:
        return name
    stem, extension = posixpath.splitext(name)
    if not stem or len(extension) > MAX_NAME // 4:  # no real extension: cut the whole name
        return name[:MAX_NAME]
    return stem[: MAX_NAME - len(extension)] + extension


def with_extension(name: str, mime_type: str) -> str:
    """``name`` with the extension of ``mime_type`` when it has none (``download`` -> ``download.pdf``)."""
    kind = mime_type.split(";", 1)[0].strip().lower()
    if posixpath.splitext(name)[1] or not kind or kind == "application/octet-stream":
        return name
    extension = mimetypes.guess_extension(kind) or ""
    return short_name(name + extension)


def url_name(url: str) -> str:
    """The file name a URL's path ends with, decoded (``%E6%8A%A5%E5%91%8A.pdf`` -> ``报告.pdf``)."""
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def _source(block: Mapping[str, Any]) -> tuple[str | None, str | None, str]:
    """(base64 text, URL, type) of a block in any of the shapes read here."""
    mime_type = str(block.get("mime_type") or "")
    if block.get("type") == "image_url":  # OpenAI's chat shape
        inner = block.get("image_url")
        url = inner.get("url") if isinstance(inner, Mapping) else inner
        block = {"url": url}
    data = block.get("base64")
    url = block.get("url")
    if block.get("source_type") == "base64":
        data = block.get("data")
    elif block.get("source_type") == "url":
        url = block.get("url") or block.get("data")
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        mime_type, url = mime_type or head, None
    return (data if isinstance(data, str) else None), (url if isinstance(url, str) else None), mime_type


def file_of(block: Any, number: int = 1) -> OutgoingFile | None:
    """The file a content block carries, or None (another kind of block, a ``file_id`` only,
    undecodable base64)."""
    if not isinstance(block, Mapping) or block.get("type") not in ("image", "file", "image_url"):
        return None
    image = block.get("type") in ("image", "image_url")
    encoded, url, mime_type = _source(block)
    caption = str(_mapping(block.get("extras")).get("caption") or "")
    if encoded is not None:
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            log.warning("a %s block's base64 does not decode: left out", block.get("type"))
            return None
        name = _name(block, mime_type, image, number)
        return OutgoingFile(name, mime_type or _guess(name), data=data, image=image, caption=caption)
    if url:
        name = with_extension(
            _name({"filename": url_name(url), **block}, mime_type, image, number), mime_type
        )
        return OutgoingFile(name, mime_type, url=url, image=image, caption=caption)
    return None


def _guess(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def _blocks(value: Any) -> Iterable[Any]:
    """The blocks of a message's content or a tool's artifact."""
    if isinstance(value, Mapping):
        files = value.get("files")
        return files if isinstance(files, list) else [value]
    if isinstance(value, list | tuple):
        return value
    return []


def files_in(contents: Iterable[Any]) -> list[OutgoingFile]:
    """The files in ``contents`` (final messages' content, tools' artifacts), in order."""
    found: list[OutgoingFile] = []
    for content in contents:
        for block in _blocks(content):
            file = file_of(block, len(found) + 1)
            if file is not None:
                found.append(file)
    if len(found) > MAX_FILES:
        log.warning("the turn made %d files: only the first %d are sent", len(found), MAX_FILES)
    return found[:MAX_FILES]
