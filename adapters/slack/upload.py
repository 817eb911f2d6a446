"""Files the agent sends, uploaded into the conversation's thread the way ``files_upload_v2`` does.

slack_sdk's ``files_upload_v2`` makes three calls: ``files.getUploadURLExternal`` (a file id and
an upload URL), a POST of the bytes to that URL, and ``files.completeUploadExternal``, which
shares the file in the channel (``channel_id``, ``thread_ts``, ``initial_comment``). They are
made here one by one with the same client methods, so that the file id of an upload is
remembered (the core's adapter state, under the item's delivery id) before the file is
shared: a delivery retried after a failure of the last step completes the same upload instead
of uploading it again, once shared it is not shared again, and where the share's answer was
lost (a timeout, a 5xx after Slack did it) ``files.info`` says whether it was shared before the
share is tried again. Needs the ``files:write`` scope (``files.info``: ``files:read``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import aiohttp

from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed
from clarigate.gateway.boundary.retry import PARTS_TTL
from clarigate.gateway.runtime.logs import log_platform_call

from .markup import escape_mrkdwn
from .send import PLATFORM, SlackSender, count_api_error

log = logging.getLogger(__name__)

#: Slack takes files up to 1 GB.
MAX_FILE_BYTES = 1024**3
UPLOAD_TIMEOUT_SECONDS = 120


def upload_key(delivery_id: str) -> str:
    """Where the steps done for a file's delivery are remembered."""
    return f"file-upload:{delivery_id}"


class SlackFiles:
    """Sends ``FileReply`` items: upload, then share in the thread, each step done once."""

    def __init__(self, sender: SlackSender, state: Callable[[], AdapterState | None]) -> None:
        self.sender = sender
        self.state = state

    async def send(self, conversation: Conversation, item: FileReply) -> None:
        """Upload ``item`` (unless an earlier attempt did) and share it in the conversation's thread."""
        state, key = self.state(), upload_key(item.delivery_id) if item.delivery_id else None
        done = (await state.get_json(key) if state and key else None) or {}
        if done.get("shared"):
            log.info("slack: file of delivery %s was shared already", item.delivery_id)
            return
        file_id = done.get("file_id")
        if file_id and await self._shared_in(file_id, conversation.chat_id):
            log.info("slack: file of delivery %s was shared before its answer was lost", item.delivery_id)
        else:
            file_id = file_id or await self._uploaded(item, state, key)
            await self._complete(conversation, item, file_id)
        if state and key:
            await state.set_json(key, {"file_id": file_id, "shared": True}, PARTS_TTL)

    async def _uploaded(self, item: FileReply, state: AdapterState | None, key: str | None) -> str:
        """A new upload of ``item``, its file id remembered before it is shared."""
        file_id = await self._upload(item)
        if state and key:
            await state.set_json(key, {"file_id": file_id}, PARTS_TTL)
        return file_id

    async def _shared_in(self, file_id: str, channel: str) -> bool:
        """Whether an earlier attempt shared ``file_id`` in ``channel`` already (``files.info``:
        an answer lost after Slack shared it); a file Slack cannot describe counts as not shared."""
        try:
            info = await self.sender.file_info(file_id)
        except DeliveryFailed as error:
            if not error.permanent:
                raise
            return False
        shares: dict[str, Any] = info["shares"] if isinstance(info.get("shares"), dict) else {}
        found = {c for kind in ("public", "private") for c in (shares.get(kind) or {})}
        found |= {c for kind in ("channels", "groups", "ims") for c in info.get(kind) or []}
        return channel in found

    async def _complete(self, conversation: Conversation, item: FileReply, file_id: str) -> None:
        """``files.completeUploadExternal``: the upload shared in the conversation's thread."""
        client = self.sender.client
        comment = escape_mrkdwn(item.caption) if item.caption else None
        await self.sender.attempt(
            "files.completeUploadExternal",
            lambda: client.files_completeUploadExternal(
                files=[{"id": file_id, "title": item.name}],
                channel_id=conversation.chat_id,
                thread_ts=conversation.reply_to,
                initial_comment=comment,
            ),
        )
        log_platform_call(PLATFORM, "files.completeUploadExternal", "ok")

    async def _upload(self, item: FileReply) -> str:
        """A new upload of ``item``'s bytes; its file id."""
        client = self.sender.client
        answer = await self.sender.attempt(
            "files.getUploadURLExternal",
            lambda: client.files_getUploadURLExternal(filename=item.name, length=item.size),
        )
        url, file_id = str(answer.get("upload_url") or ""), str(answer.get("file_id") or "")
        if not url or not file_id:
            raise DeliveryFailed("Slack files.getUploadURLExternal: no upload URL", permanent=False)
        timeout = aiohttp.ClientTimeout(total=UPLOAD_TIMEOUT_SECONDS)
        try:
            async with (
                aiohttp.ClientSession(timeout=timeout) as session,
                session.post(url, data=item.data) as response,
            ):
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            count_api_error("network")
            log_platform_call(PLATFORM, "file upload", f"network error {type(error).__name__}")
            raise DeliveryFailed("Slack file upload: network", permanent=False, code="network") from error
        log_platform_call(PLATFORM, "file upload", "ok" if status == 200 else f"HTTP {status}")
        if status != 200:
            transient = status == 429 or status >= 500
            count_api_error("server_error" if status >= 500 else "client_error")
            problem = f"Slack file upload: HTTP {status}"
            raise DeliveryFailed(problem, permanent=not transient, code=f"http_{status}")
        return file_id
