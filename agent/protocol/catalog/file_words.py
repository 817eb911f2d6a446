"""The catalog's lines about files the agent sends (part of ``WORDS``, kept apart to keep modules small)."""

from __future__ import annotations

from ..models import Locale

FILE_WORDS: dict[str, dict[Locale, str]] = {
    # A file the agent made that cannot be sent (gateway/flow/files_out.py): said, never dropped.
    "file_too_big": {
        "en": "I cannot send {name} ({size}): files over {cap} cannot be sent here.",
        "zh": "无法发送 {name}（{size}）：此处无法发送超过 {cap} 的文件。",
    },
    "files_unsupported": {
        "en": "I cannot send {name}: files cannot be sent here.",
        "zh": "无法发送 {name}：此处无法发送文件。",
    },
    "file_unavailable": {
        "en": "I could not get {name} to send it.",
        "zh": "无法获取 {name}，因此未能发送。",
    },
}
