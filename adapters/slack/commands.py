"""The ``/clarigate`` slash command, mapped onto the core's neutral text commands.

Slack takes a message that starts with ``/`` as a slash command, so ``/new`` cannot be
typed to the bot; ``/clarigate new|cancel|help|status`` can. The command arrives on the
same request URL (or Socket Mode) as events, form-encoded, without a thread: in a DM it
is the DM's conversation, in a channel the channel's top-level one. Anything else after
``/clarigate`` (or nothing) asks for help.
"""

from __future__ import annotations

from typing import Any

from gateway.messages import Conversation, InboundMessage, Sender

from .receive import PLATFORM

SUBCOMMANDS = ("new", "cancel", "help", "status")


def neutral_command(text: str) -> str:
    """``new`` -> ``/new`` (words after it kept); anything unknown -> ``/help``."""
    words = text.strip().split(maxsplit=1)
    name = words[0].lower().lstrip("/") if words else ""
    if name not in SUBCOMMANDS:
        return "/help"
    return f"/{name} {words[1]}" if len(words) > 1 else f"/{name}"


def parse_command(body: dict[str, Any]) -> InboundMessage | None:
    """The ``InboundMessage`` a slash command stands for, or None when it names no channel or user."""
    channel, user = body.get("channel_id"), body.get("user_id")
    if not channel or not user:
        return None
    conversation = Conversation(
        platform=PLATFORM,
        workspace=str(body.get("team_id") or ""),
        chat_id=str(channel),
        topic=None,
        is_direct=str(channel).startswith("D"),
    )
    return InboundMessage(
        conversation=conversation,
        sender=Sender(user_id=str(user)),
        text=neutral_command(str(body.get("text") or "")),
        # A command has no event id; its trigger id is unique and a replay carries the same one.
        event_id=f"command:{body.get('trigger_id') or ''}",
    )
