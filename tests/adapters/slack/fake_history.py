"""``conversations.replies`` and ``conversations.history`` of the fake Slack, as Slack answers them.

- ``conversations.replies`` needs ``channel`` and ``ts`` (the thread's parent); it answers the
  thread's messages oldest first (``thread_not_found`` for a thread it does not know);
  ``conversations.history`` answers a channel's messages newest first.
- Both take ``oldest`` / ``latest`` (exclusive unless ``inclusive``), ``limit`` (default 100,
  at most 1,000) and ``cursor``; a page with more after it says ``has_more`` and gives
  ``response_metadata.next_cursor``.
- A message's ``metadata`` comes whole only with ``include_all_metadata``; without it Slack
  leaves out the ``event_payload``.
- A token without the conversation type's ``*:history`` scope is refused with ``missing_scope``
  (``FakeSlack.missing_scopes``).
"""

from __future__ import annotations

from typing import Any

READ_METHODS = {"conversations.replies", "conversations.history"}


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1")


def _scope_for(channel: str) -> str:
    return {"D": "im:history", "G": "groups:history"}.get(channel[:1], "channels:history")


def read(
    messages: list[dict[str, Any]], method: str, params: dict[str, Any], missing: set[str]
) -> dict[str, Any]:
    """The answer to a read method over the bot's ``messages`` as people see them now."""
    channel = str(params.get("channel") or "")
    if not channel:
        return {"ok": False, "error": "channel_not_found"}
    if _scope_for(channel) in missing:
        return {"ok": False, "error": "missing_scope", "needed": _scope_for(channel)}
    in_channel = [m for m in messages if m.get("channel") == channel]
    if method == "conversations.replies":
        parent = str(params.get("ts") or "")
        if not parent:
            return {"ok": False, "error": "invalid_arguments"}
        found = [m for m in in_channel if m.get("ts") == parent or m.get("thread_ts") == parent]
        if not found:
            return {"ok": False, "error": "thread_not_found"}
        found.sort(key=lambda m: float(m["ts"]))
    else:
        found = sorted(in_channel, key=lambda m: float(m["ts"]), reverse=True)
    inclusive = _truthy(params.get("inclusive"))
    oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or 1e12)
    found = [
        m
        for m in found
        if (oldest <= float(m["ts"]) if inclusive else oldest < float(m["ts"]))
        and (float(m["ts"]) <= latest if inclusive else float(m["ts"]) < latest)
    ]
    start = int(params.get("cursor") or 0)
    limit = min(int(params.get("limit") or 100), 1000)
    page = [_shown(m, _truthy(params.get("include_all_metadata"))) for m in found[start : start + limit]]
    more = start + limit < len(found)
    return {
        "ok": True,
        "messages": page,
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }


def _shown(message: dict[str, Any], all_metadata: bool) -> dict[str, Any]:
    shown = {k: message[k] for k in ("type", "text", "ts", "thread_ts", "blocks", "bot_id") if k in message}
    shown.setdefault("type", "message")
    metadata = message.get("metadata")
    if isinstance(metadata, dict):
        shown["metadata"] = metadata if all_metadata else {"event_type": metadata.get("event_type")}
    return shown
