"""Which edited messages are answered: a message edited to mention the bot, soon after it was written.

Slack sends no event to answer for most edits (``message_changed`` is ignored). A message edited
to add the bot's mention comes as an ``app_mention`` carrying ``edited`` (again for each later
edit of it): the person asked the bot, so it is answered, once (its event id is the message's,
``receive.event_message_id``: a mention answered already is not run again), as long as the edit
comes within ``EDIT_ANSWERED_SECONDS`` of the message; an edit of an old message does not run
an old request anew. A deleted message (``message_deleted``) is reported to the core
(``GatewayPort.withdraw``): one whose run has not started is not run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: How soon after it was written a message edited to mention the bot is still answered.
EDIT_ANSWERED_SECONDS = 600


def edit_ignored(event: Mapping[str, Any], kind: Any, ts: str) -> bool:
    """Whether ``event`` (of type ``kind``, its message's ``ts``) is an edit to ignore: any but an
    ``app_mention`` edited within ``EDIT_ANSWERED_SECONDS`` of its message."""
    edited = event.get("edited")
    if not edited:
        return False
    if kind != "app_mention" or not isinstance(edited, Mapping):
        return True
    try:
        return float(str(edited.get("ts"))) - float(ts) > EDIT_ANSWERED_SECONDS
    except ValueError:
        return True


def deleted_event_id(event: Mapping[str, Any]) -> str | None:
    """The event id (``receive.event_message_id``: ``{channel}:{ts}``) of the message a
    ``message_deleted`` event says was deleted; None for any other event, and for a bot's
    message (the bot's own progress and live messages it deletes: never a request)."""
    channel, deleted = event.get("channel"), event.get("deleted_ts")
    if event.get("type") != "message" or event.get("subtype") != "message_deleted":
        return None
    previous = event.get("previous_message")
    if isinstance(previous, Mapping) and previous.get("bot_id"):
        return None
    return f"{channel}:{deleted}" if isinstance(channel, str) and isinstance(deleted, str) else None
