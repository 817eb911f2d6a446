"""Members leaving a group, or removed from it: ``im.chat.member.user.deleted_v1``.

The core closes the open questions only they may answer there (``GatewayPort.member_left``), as
their Cancel would, so the group's threads are not held up by them until they expire. The event
(an app subscribed to it, with the scope to read group members) names the chat and the people
who left (``users[].user_id.open_id``, the id messages name them by).
"""

from __future__ import annotations

from typing import Any

from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.boundary.port import GatewayPort

PLATFORM = "feishu"
MEMBERS_LEFT_EVENT = "im.chat.member.user.deleted_v1"


async def members_left(gateway: GatewayPort, header: dict[str, Any], event: dict[str, Any]) -> None:
    """Tell the core of each person ``event`` says left its chat (the chat known, as a message's
    conversation is, by the tenant and the chat's id)."""
    chat_id, users = event.get("chat_id"), event.get("users")
    if not isinstance(chat_id, str) or not chat_id or not isinstance(users, list):
        return
    workspace = str(header.get("tenant_key") or "")
    conversation = Conversation(platform=PLATFORM, workspace=workspace, chat_id=chat_id, chat_type="group")
    for user in users:
        ids = user.get("user_id") if isinstance(user, dict) else None
        open_id = ids.get("open_id") if isinstance(ids, dict) else None
        if isinstance(open_id, str) and open_id:
            name = user.get("name") if isinstance(user.get("name"), str) else None
            await gateway.member_left(conversation, Sender(user_id=open_id, display_name=name or None))
