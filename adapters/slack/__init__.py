"""Slack: Block Kit clarifications, Events API and interactivity, HTTP and Socket Mode.

The adapter is imported on first use (``from clarigate.adapters.slack import SlackAdapter``): reading the
settings (``.settings``) must not load the platform's SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapter import SlackAdapter, SlackStartError

__all__ = ["SlackAdapter", "SlackStartError"]


def __getattr__(name: str) -> Any:
    """The adapter's names, imported when first asked for."""
    if name in __all__:
        from . import adapter

        return getattr(adapter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
