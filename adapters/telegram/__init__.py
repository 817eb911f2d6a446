"""Telegram: inline keyboards, step-by-step forms, webhook and leased long polling.

The adapter is imported on first use (``from clarigate.adapters.telegram import
TelegramAdapter``): reading the settings (``.settings``) must not load the platform's SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]


def __getattr__(name: str) -> Any:
    """The adapter's names, imported when first asked for."""
    if name in __all__:
        from . import adapter

        return getattr(adapter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
