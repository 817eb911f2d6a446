"""Downloading files people shared, with the bot token (called by a worker, never on the ack path).

``url_private_download`` needs ``Authorization: Bearer <bot token>`` and the ``files:read``
scope. Without them Slack does not refuse: it answers 200 with its HTML sign-in page, so
the answer's type is checked against the file's. The token is only ever sent to Slack's
own hosts (or the configured API host, for a proxy or a test server).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from clarigate.gateway.boundary.messages import Attachment
from clarigate.gateway.boundary.port import DeliveryFailed

from .receive import FILE_INFO_REF, file_attachment

log = logging.getLogger(__name__)

SLACK_FILE_HOSTS = ("slack.com", "slack-edge.com", "slack-files.com")
DOWNLOAD_TIMEOUT_SECONDS = 30
_CHUNK = 64 * 1024


def may_send_token(url: str, api_url: str) -> bool:
    """True when ``url`` is on a Slack host (or the API host): nowhere else gets the token."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    api = urlsplit(api_url)
    if host and host == (api.hostname or "").lower() and parts.port == api.port:
        return parts.scheme in ("http", "https")
    return parts.scheme == "https" and any(host == h or host.endswith("." + h) for h in SLACK_FILE_HOSTS)


def _same_type(expected: str | None, served: str) -> bool:
    """The served type fits the file's: an HTML page for a non-HTML file is Slack's sign-in page."""
    if not served:
        return True
    if served == "text/html" and expected != "text/html":
        return False
    if expected and "/" in expected and "/" in served and served != "application/octet-stream":
        return expected.split("/", 1)[0] == served.split("/", 1)[0]
    return True


async def download(attachment: Attachment, token: str, api_url: str, max_bytes: int) -> bytes | None:
    """The file's bytes, or None when it is larger than ``max_bytes``, of the wrong type, on a host
    that must not see the token, or not to be had (logged)."""
    url = attachment.ref
    if not url or not may_send_token(url, api_url):
        log.warning("slack: not downloading a file from an unexpected address")
        return None
    if attachment.size is not None and attachment.size > max_bytes:
        return None
    timeout = aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT_SECONDS)
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(url, headers=headers) as response,
        ):
            if response.status != 200:
                log.warning("slack: file download answered %d", response.status)
                return None
            if not _same_type(attachment.mime_type, response.content_type):
                log.warning(
                    "slack: file download served %s for a %s file (is files:read granted?)",
                    response.content_type,
                    attachment.mime_type,
                )
                return None
            if response.content_length is not None and response.content_length > max_bytes:
                return None
            data = bytearray()
            async for chunk in response.content.iter_chunked(_CHUNK):
                data += chunk
                if len(data) > max_bytes:
                    return None
            return bytes(data)
    except (aiohttp.ClientError, TimeoutError, OSError) as error:
        log.warning("slack: file download failed: %s", type(error).__name__)
        return None


FileInfo = Callable[[str], Awaitable[dict[str, Any]]]


async def resolve(attachment: Attachment, file_info: FileInfo) -> Attachment:
    """A Slack Connect file known by its id alone, described and made fetchable by ``files.info``;
    any other attachment as it is (and that one as it is when Slack does not say)."""
    if not attachment.ref.startswith(FILE_INFO_REF):
        return attachment
    file_id = attachment.ref.removeprefix(FILE_INFO_REF)
    try:
        found = file_attachment(await file_info(file_id))
    except DeliveryFailed as error:
        log.info("slack: files.info for a shared file answered %s", error.code)
        return attachment
    if found is None or found.ref.startswith(FILE_INFO_REF):
        return attachment
    return found
