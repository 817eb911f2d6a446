"""Telegram's "typing…" indicator while a run works: today's "Working…" on Telegram.

Telegram shows a chat action for about five seconds (``sendChatAction``), so it is repeated
until the run's reply comes (or a live message takes over), within ``TYPING_MAX``.
"""

from __future__ import annotations

import asyncio
import logging

from telegram.error import Forbidden, TelegramError

from clarigate.gateway.boundary.messages import Conversation

from .send import TelegramSender

log = logging.getLogger(__name__)

TYPING_REFRESH = 4.5  # Telegram shows "typing…" for about 5 seconds per sendChatAction
TYPING_MAX = 300.0  # never type forever if a run's end is lost


class TypingIndicators:
    """One repeating "typing…" per conversation (chat thread); starting it again restarts it."""

    def __init__(self, sender: TelegramSender) -> None:
        self.sender = sender
        self._tasks: dict[str, asyncio.Task[None]] = {}

    async def start(self, conversation: Conversation) -> None:
        """Show "typing…" now and keep it up until ``stop`` (nothing new when it shows already)."""
        running = self._tasks.get(conversation.thread_key)
        if running is not None and not running.done():
            return
        if await self._type_once(conversation):
            self._tasks[conversation.thread_key] = asyncio.create_task(self._keep_typing(conversation))

    def stop(self, conversation: Conversation) -> None:
        """Stop repeating it (Telegram clears it on its own, or when the bot's message arrives)."""
        running = self._tasks.pop(conversation.thread_key, None)
        if running is not None:
            running.cancel()

    def stop_all(self) -> None:
        """Stop every indicator (shutdown)."""
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()

    async def _type_once(self, conversation: Conversation) -> bool:
        """Show "typing…" once; False when the chat refuses the bot (403: blocked, kicked)."""
        try:
            await self.sender.typing(conversation)
        except Forbidden as exc:
            log.debug("telegram typing refused in chat %s: %s", conversation.chat_id, exc)
            return False
        except TelegramError as exc:  # a missing indicator is not worth failing a run
            log.debug("telegram typing failed: %s", exc)
        return True

    async def _keep_typing(self, conversation: Conversation) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + TYPING_MAX
        while loop.time() < until:
            await asyncio.sleep(TYPING_REFRESH)
            if not await self._type_once(conversation):
                return  # a chat that refuses the bot is sent nothing more
