"""clarigate: a chat-platform gateway for agents that ask before they guess.

This module is the ``clarigate`` package itself: ``pyproject.toml`` maps ``clarigate`` here and
``clarigate.gateway``, ``clarigate.adapters`` and ``clarigate.agent`` to the project's three
code folders, so that the distribution installs one top-level import name.

What an extension author needs is importable from here (the README's "Adding a platform" and
"Bring your own agent" use it):

- a platform: ``PlatformAdapter`` (the adapter base class), ``PlatformSettings`` (the base of
  its settings model; ``TokenShape`` for its secrets' shapes), ``GatewayPort`` (what an adapter
  calls), ``AdapterState``; the message types (``Conversation``, ``Sender``, ``MessageRef``,
  ``Attachment``, ``InboundMessage``, ``InboundAnswer``, ``Outbound`` and its members; for 👍/👎
  under answers ``FeedbackAsk``, ``InboundFeedback``, ``FeedbackOutcome``, ``FeedbackStatus``);
- the errors: ``ClarigateError`` (their base), ``BadRequest`` (a request the platform sent that
  cannot be used: a 4xx), ``DeliveryFailed`` (how a send reports a failure);
- an agent: ``ask_clarification`` (the tool), ``build_ask_clarification_tool``,
  ``ClarificationMiddleware``, and the protocol's ``HumanInputRequest`` / ``HumanInputResponse``;
- ``__version__``.

Names are loaded on first use, so ``import clarigate`` (and ``clarigate --version``) stays cheap
and an adapter author does not pull in LangChain by importing ``PlatformAdapter``.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see; at run time names load on first use
    from langchain_core.tools import BaseTool

    from clarigate.agent.middleware import ClarificationMiddleware
    from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
    from clarigate.agent.tools import build_ask_clarification_tool
    from clarigate.gateway.boundary.errors import BadRequest, ClarigateError, DeliveryFailed
    from clarigate.gateway.boundary.messages import (
        Attachment,
        Conversation,
        FeedbackAsk,
        FeedbackOutcome,
        FeedbackStatus,
        InboundAnswer,
        InboundFeedback,
        InboundMessage,
        MessageRef,
        Sender,
    )
    from clarigate.gateway.boundary.outbound_items import (
        ClarificationClosed,
        ClarificationOut,
        ErrorReply,
        FileReply,
        LiveEnd,
        LiveView,
        Outbound,
        ProgressUpdate,
        TextReply,
    )
    from clarigate.gateway.boundary.port import AdapterState, GatewayPort, PlatformAdapter
    from clarigate.gateway.boundary.settings import PlatformSettings, TokenShape

    ask_clarification: BaseTool

try:
    __version__ = version("clarigate")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("PlatformAdapter", "GatewayPort", "AdapterState"), "clarigate.gateway.boundary.port"),
    **dict.fromkeys(("ClarigateError", "BadRequest", "DeliveryFailed"), "clarigate.gateway.boundary.errors"),
    **dict.fromkeys(("PlatformSettings", "TokenShape"), "clarigate.gateway.boundary.settings"),
    **dict.fromkeys(
        (
            "Conversation",
            "Sender",
            "MessageRef",
            "Attachment",
            "InboundMessage",
            "InboundAnswer",
            "FeedbackAsk",
            "InboundFeedback",
            "FeedbackOutcome",
            "FeedbackStatus",
        ),
        "clarigate.gateway.boundary.messages",
    ),
    **dict.fromkeys(
        (
            "Outbound",
            "TextReply",
            "ClarificationOut",
            "ClarificationClosed",
            "ProgressUpdate",
            "ErrorReply",
            "LiveView",
            "LiveEnd",
            "FileReply",
        ),
        "clarigate.gateway.boundary.outbound_items",
    ),
    **dict.fromkeys(("HumanInputRequest", "HumanInputResponse"), "clarigate.agent.protocol"),
    "build_ask_clarification_tool": "clarigate.agent.tools",
    "ClarificationMiddleware": "clarigate.agent.middleware",
}

__all__ = [
    "AdapterState",
    "Attachment",
    "BadRequest",
    "ClarificationClosed",
    "ClarificationMiddleware",
    "ClarificationOut",
    "ClarigateError",
    "Conversation",
    "DeliveryFailed",
    "ErrorReply",
    "FileReply",
    "FeedbackAsk",
    "FeedbackOutcome",
    "FeedbackStatus",
    "GatewayPort",
    "HumanInputRequest",
    "HumanInputResponse",
    "InboundAnswer",
    "InboundFeedback",
    "InboundMessage",
    "LiveEnd",
    "LiveView",
    "MessageRef",
    "Outbound",
    "PlatformAdapter",
    "PlatformSettings",
    "ProgressUpdate",
    "Sender",
    "TextReply",
    "TokenShape",
    "__version__",
    "ask_clarification",
    "build_ask_clarification_tool",
]


def __getattr__(name: str) -> Any:
    """Load a public name on first use (PEP 562) and keep it on the package."""
    if name == "ask_clarification":
        from clarigate.agent.tools import build_ask_clarification_tool

        value: Any = build_ask_clarification_tool()
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'clarigate' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
