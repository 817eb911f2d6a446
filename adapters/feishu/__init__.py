"""Feishu / Lark adapter: interactive cards (JSON 2.0), webhook and long connection receive modes.

The adapter is imported on first use (``from clarigate.adapters.feishu import FeishuAdapter``): reading the
settings (``.settings``) must not load the platform's SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapter import FeishuAdapter

__all__ = ["FeishuAdapter"]


def __getattr__(name: str) -> Any:
    """The adapter's names, imported when first asked for."""
    if name in __all__:
        from . import adapter

        return getattr(adapter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
