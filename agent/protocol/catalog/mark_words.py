"""The catalog's punctuation by language, and the names of things a person sent that have none
(part of ``WORDS``). Chinese text takes full-width marks: ``名称：小明；颜色：红，蓝（必填）``;
``catalog.joined``, ``labelled`` and ``bracketed`` write them, so no caller spells ", " or " (".
"""

from __future__ import annotations

from ..models import Locale

MARK_WORDS: dict[str, dict[Locale, str]] = {
    # --- punctuation (catalog.joined, labelled, bracketed) ----------------------------------------
    "list_sep": {"en": ", ", "zh": "，"},  # the values of a list: 红，蓝
    "label_sep": {"en": ": ", "zh": "："},  # a label and its value: 名称：小明
    "item_sep": {"en": "; ", "zh": "；"},  # the labelled values of a form: 名称：小明；颜色：红
    "bracketed": {"en": " ({inner})", "zh": "（{inner}）"},  # an aside after a text
    "field_optional": {"en": " (optional)", "zh": "（选填）"},  # the counterpart of field_required
    # where a text stops being JSON (json.JSONDecodeError's lineno and colno)
    "json_position": {"en": "line {line}, column {column}", "zh": "第 {line} 行第 {column} 列"},
    # --- what a person sent with no name of its own (the adapters' attachments) ---------------------
    "attachment_image": {"en": "image", "zh": "图片"},
    "attachment_file": {"en": "file", "zh": "文件"},
    "attachment_document": {"en": "document", "zh": "文件"},
    "attachment_audio": {"en": "audio", "zh": "音频"},
    "attachment_voice": {"en": "voice message", "zh": "语音消息"},
    "attachment_video": {"en": "video", "zh": "视频"},
    "attachment_video_note": {"en": "video message", "zh": "视频消息"},
    "attachment_sticker": {"en": "sticker", "zh": "表情贴纸"},
    "attachment_seconds": {"en": "{seconds} s", "zh": "{seconds} 秒"},
}
