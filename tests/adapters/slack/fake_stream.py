"""The fake Slack's chat stream (``chat.startStream`` / ``appendStream`` / ``stopStream``) and
Block Kit checks, answered as Slack documents them (see ``fake_slack.py``).

``chat.startStream`` takes ``task_display_mode`` ``timeline`` or ``plan`` (else
``invalid_arguments``); ``chat.stopStream`` may end a stream with ``blocks`` shown under its text
(``invalid_blocks`` when Block Kit refuses them).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from .fake_views import kit_problems

BOT_ID = "B0BOT"
MAX_MESSAGE_BLOCKS = 50
MAX_MARKDOWN_TEXT = 12_000
TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
TASK_DISPLAY_MODES = {"timeline", "plan"}
STREAM_METHODS = {"chat.startStream", "chat.appendStream", "chat.stopStream"}


def block_problems(blocks: Any) -> list[str]:
    """Why Slack would answer ``invalid_blocks``: not a list, more than 50, or a block Block Kit
    refuses (``slack_sdk``'s models check Slack's documented limits; ``fake_views.kit_problems``
    what they let through)."""
    if not isinstance(blocks, list):
        return ["blocks must be an array"]
    if len(blocks) > MAX_MESSAGE_BLOCKS:
        return [f"no more than {MAX_MESSAGE_BLOCKS} items allowed [json-pointer:/blocks]"]
    return kit_problems(blocks, "/blocks")


def chunk_problem(chunk: Any) -> str | None:
    """Why Slack would refuse a streaming chunk (``markdown_text``, ``task_update``, ``plan_update``,
    ``blocks``), or None."""
    if not isinstance(chunk, dict):
        return "a chunk must be an object"
    kind = chunk.get("type")
    if kind == "markdown_text":
        return None if isinstance(chunk.get("text"), str) else "markdown_text needs text"
    if kind == "task_update":
        if not chunk.get("id") or not chunk.get("title"):
            return "task_update needs id and title"
        return None if chunk.get("status") in TASK_STATUSES else "task_update status is not valid"
    if kind == "plan_update":
        return None if chunk.get("title") else "plan_update needs a title"
    if kind == "blocks":
        return None if not block_problems(chunk.get("blocks")) else "blocks are not valid"
    return f"unknown chunk type {kind!r}"


@dataclass
class Stream:
    """A streamed message: what it shows and whether it still takes appends."""

    channel: str
    thread_ts: str
    started: float
    text: str = ""
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task id -> its latest update
    streaming: bool = True
    appends: int = 0
    stopped_by_user: bool = False  # the person pressed Stop on it


class StreamMethods:
    """``FakeSlack``'s stream methods (its fields: ``streams``, ``stream_lifetime``,
    ``user_stops_after``, ``_ts``)."""

    streams: dict[str, Stream]
    stream_lifetime: float | None
    user_stops_after: int | None
    _ts: itertools.count

    def _answer_stream(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``chat.startStream`` / ``appendStream`` / ``stopStream`` as Slack answers them."""
        required = ["channel", "thread_ts"] if method == "chat.startStream" else ["channel", "ts"]
        missing = [name for name in required if not params.get(name)]
        if missing:
            messages = [f"[ERROR] missing required field: {name}" for name in missing]
            return {"ok": False, "error": "invalid_arguments", "response_metadata": {"messages": messages}}
        channel = str(params["channel"])
        chunks = params.get("chunks")
        if chunks is not None and (not isinstance(chunks, list) or any(map(chunk_problem, chunks))):
            return {"ok": False, "error": "invalid_chunks"}
        texts = [str(params.get("markdown_text") or "")]
        texts += [c["text"] for c in chunks or [] if c.get("type") == "markdown_text"]
        if any(len(text) > MAX_MARKDOWN_TEXT for text in texts):
            return {"ok": False, "error": "msg_too_long"}
        mode = params.get("task_display_mode")
        if method == "chat.startStream" and mode is not None and mode not in TASK_DISPLAY_MODES:
            return {"ok": False, "error": "invalid_arguments"}
        blocks = params.get("blocks") if method == "chat.stopStream" else None
        if blocks is not None and block_problems(blocks):
            return {"ok": False, "error": "invalid_blocks", "errors": block_problems(blocks)}
        if method == "chat.startStream":
            if not channel.startswith("D"):  # outside DMs Slack streams to a named person
                if not params.get("recipient_team_id"):
                    return {"ok": False, "error": "missing_recipient_team_id"}
                if not params.get("recipient_user_id"):
                    return {"ok": False, "error": "missing_recipient_user_id"}
            ts = self._new_ts()
            self.streams[ts] = Stream(channel, str(params["thread_ts"]), time.monotonic())
            return {"ok": True, "channel": channel, "ts": ts}
        ts = str(params["ts"])
        stream = self.streams.get(ts)
        if stream is None or stream.channel != channel:
            return {"ok": False, "error": "message_not_found"}
        expired = (
            self.stream_lifetime is not None and time.monotonic() - stream.started > self.stream_lifetime
        )
        if stream.stopped_by_user:
            return {"ok": False, "error": "stopped_by_user"}
        if not stream.streaming or expired:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        if method == "chat.appendStream" and not any(texts) and not chunks:
            return {"ok": False, "error": "no_text"}
        stream.text += "".join(texts)
        for chunk in chunks or []:
            if chunk.get("type") == "task_update":
                stream.tasks[chunk["id"]] = chunk
        if method == "chat.appendStream":
            stream.appends += 1
            if self.user_stops_after is not None and stream.appends >= self.user_stops_after:
                stream.stopped_by_user = True  # Slack ends the stream where the person stopped it
            return {"ok": True, "channel": channel, "ts": ts}
        stream.streaming = False
        message: dict[str, Any] = {
            "type": "message",
            "subtype": "bot_message",
            "text": stream.text,
            "ts": ts,
            "bot_id": BOT_ID,
        }
        if blocks:
            message["blocks"] = blocks  # shown under the streamed text
        return {"ok": True, "channel": channel, "ts": ts, "message": message}
