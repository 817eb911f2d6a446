"""Who may talk to the bot: each platform's allow-lists, and the one refusal someone kept out gets."""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ErrorReply
from clarigate.gateway.flow.notices import notice_for_text
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store

log = logging.getLogger(__name__)


def allowed(config: GatewayConfig, conv: Conversation, sender: Sender) -> bool:
    """True when the platform's allow-lists (users, chats) let ``sender`` talk in ``conv``."""
    # every platform of the registry (built-in, installed, extra_adapters) has a section, its
    # allow-lists included; None is only an adapter a test registers by hand
    access = config.platform(conv.platform)
    if access is None:
        return True
    if access.allowed_users and sender.user_id not in access.allowed_users:
        return False
    return not access.allowed_chats or conv.chat_id in access.allowed_chats


async def refuse_once(
    config: GatewayConfig, store: Store, outbox: Outbox, conv: Conversation, sender: Sender, text: str
) -> None:
    """The polite refusal, once per person and chat within ``seen_ttl_seconds``."""
    key = f"refused:{conv.platform}:{conv.workspace}:{conv.chat_id}:{sender.user_id}"
    if await store.first_time(key, config.seen_ttl_seconds):
        log.info("refused %s in %s:%s (not on the allowlist)", sender.user_id, conv.platform, conv.chat_id)
        await outbox.send_quietly(conv, ErrorReply(text=notice_for_text("refused", text)))
