"""Feishu / Lark adapter: interactive cards (JSON 2.0), webhook and long connection receive modes."""

from .adapter import FeishuAdapter

__all__ = ["FeishuAdapter"]
