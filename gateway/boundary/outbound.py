"""Handing outbound items to the adapter of the conversation's platform."""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import FileReply, Outbound
from clarigate.gateway.boundary.port import PlatformAdapter

log = logging.getLogger(__name__)


class Outbox:
    """The registered adapters, by platform; ``send`` routes an item to the right one."""

    def __init__(self) -> None:
        self._adapters: dict[str, PlatformAdapter] = {}

    def register(self, adapter: PlatformAdapter) -> None:
        """Route items for ``adapter.platform`` to ``adapter`` (one adapter per platform)."""
        if adapter.platform in self._adapters:
            raise ValueError(f"an adapter for {adapter.platform!r} is already registered")
        self._adapters[adapter.platform] = adapter

    @property
    def adapters(self) -> list[PlatformAdapter]:
        """The registered adapters, in registration order."""
        return list(self._adapters.values())

    def serves(self, platform: str) -> bool:
        """True when an adapter for ``platform`` is registered here."""
        return platform in self._adapters

    def adapter_for(self, platform: str) -> PlatformAdapter:
        """The adapter of ``platform``; ``LookupError`` when none is registered."""
        try:
            return self._adapters[platform]
        except KeyError:
            raise LookupError(f"no adapter registered for platform {platform!r}") from None

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver ``item``; errors propagate (the caller decides whether the job is retried).

        One line per call: what was sent, to which platform, the platform's message id or the
        failure's status (``DeliveryFailed.code``).
        """
        adapter = self.adapter_for(conversation.platform)
        try:
            if isinstance(item, FileReply):
                ref = await adapter.send_file(conversation, item)
            else:
                ref = await adapter.send(conversation, item)
        except Exception as exc:
            code = getattr(exc, "code", None) or type(exc).__name__
            log.info("send %s to %s failed: %s", item.kind, conversation.platform, code)
            raise
        log.info(
            "sent %s to %s: %s",
            item.kind,
            conversation.platform,
            f"message {ref.message_id}" if ref is not None else "ok",
        )
        return ref

    async def already_delivered(
        self, conversation: Conversation, item: Outbound, since: float
    ) -> MessageRef | bool | None:
        """The adapter's ``already_delivered``; None (cannot tell) when asking it fails."""
        adapter = self.adapter_for(conversation.platform)
        try:
            found = await adapter.already_delivered(conversation, item, since)
        except Exception as exc:  # noqa: BLE001 (a read-back that fails leaves the send as it was)
            log.warning(
                "could not check %s for %s %s (%s): sending it",
                conversation.platform,
                item.kind,
                getattr(item, "delivery_id", None),
                getattr(exc, "code", None) or type(exc).__name__,
            )
            return None
        return found

    async def send_quietly(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver a cosmetic item (progress, refusal); a failure is logged, not raised."""
        try:
            return await self.send(conversation, item)
        except Exception:
            log.warning("could not send %s to %s", item.kind, conversation.platform, exc_info=True)
            return None
