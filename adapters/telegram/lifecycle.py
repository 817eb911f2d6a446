"""The Telegram adapter's lifecycle (mixed into ``TelegramAdapter``): the webhook route, ``getMe``
at start, the command menu, the webhook's registration or the leased poller, ``doctor``'s check."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from functools import partial

from starlette.routing import BaseRoute
from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import ExtBot

from clarigate.adapters.telegram.settings import TelegramSettings
from clarigate.gateway.runtime.redaction import without_secrets

from .chat_action import TypingIndicators
from .commands import menus
from .deferred import DeferredEdits
from .effects import AfterAck
from .live import LiveMessages
from .polling import ALLOWED_UPDATES, LeasedPoller
from .receive import BotIdentity, UpdateHandler, webhook_route
from .send import STARTUP_RETRIES, TelegramSender, patiently

log = logging.getLogger("clarigate.adapters.telegram.adapter")  # the adapter's lines, as before


class TelegramLifecycle:
    """The adapter's ``routes``, ``start``, ``start_receiving``, ``connection_up``, ``stop`` and ``check``."""

    settings: TelegramSettings
    bot: ExtBot[None]
    me: BotIdentity | None
    poller: LeasedPoller | None
    sender: TelegramSender
    deferred: DeferredEdits
    after_ack: AfterAck
    typing: TypingIndicators
    live: LiveMessages
    handle_update: UpdateHandler

    # --- lifecycle -----------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """``POST /telegram/webhook``; without a configured secret every call is refused (403)."""
        secret = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else None
        return [webhook_route(self.bot, secret, self.handle_update)]

    async def start(self) -> None:
        """Check the token with ``getMe``."""
        problems = self._config_problems()
        if problems:
            raise RuntimeError("Telegram: " + "; ".join(problems))
        try:
            await patiently(self.bot.initialize, "getMe")
        except InvalidToken as exc:
            raise RuntimeError(f"Telegram rejected TELEGRAM_BOT_TOKEN (getMe failed: {exc.message})") from exc
        except TelegramError as exc:
            if not _unreachable(exc):
                raise
            raise RuntimeError(self._unreachable_at(exc)) from exc
        user = self.bot.bot
        self.me = BotIdentity(id=user.id, username=user.username or "")
        self.sender.own = self.me.username
        self.deferred.start()  # edits a flood wait put off, left by a replica that stopped
        log.info(
            "telegram bot @%s ready (%s)", self.me.username, "webhook" if self.poller is None else "polling"
        )

    async def start_receiving(self) -> None:
        """The command menu, then the webhook's registration or polling (under its lease)."""
        await self._register_commands()
        if self.settings.webhook_url:
            secret = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else None
            try:
                await patiently(
                    lambda: self.bot.set_webhook(
                        self.settings.webhook_url or "", secret_token=secret, allowed_updates=ALLOWED_UPDATES
                    ),
                    "setWebhook",
                )
            except TelegramError as exc:
                if _unreachable(exc):
                    raise RuntimeError(self._unreachable_at(exc)) from exc
                raise RuntimeError(  # "Bad webhook: …": the URL, as Telegram's servers see it
                    f"Telegram refused telegram.webhook_url (TELEGRAM_WEBHOOK_URL): {exc.message} "
                    "(setWebhook)"
                ) from exc
        elif self.poller is not None:
            self.poller.start()

    async def _register_commands(self) -> None:
        """``setMyCommands``: the menu shown on typing ``/``, per language; kept from the last start,
        so a flood wait over 5 s (which would hold the webhook back) ends the registering."""
        for language, commands in menus(self.me.username if self.me else "").items():
            try:
                await patiently(
                    partial(self.bot.set_my_commands, commands, language_code=language),
                    "setMyCommands",
                    replace(STARTUP_RETRIES, attempts=2, longest_wait=5.0),
                )
            except TelegramError as exc:  # typing the command still works
                log.warning("telegram setMyCommands (%s) failed: %s", language or "default", exc)
                if isinstance(exc, RetryAfter):
                    return

    async def connection_up(self) -> bool | None:
        """Polling: whether the poller runs (None in webhook mode, Telegram calls in, or where
        it was not started: a worker process)."""
        if self.poller is None or not self.poller.started:
            return None
        return self.poller.running

    async def stop(self) -> None:
        """Stop polling (handing the lease over), stop typing indicators, close the HTTP client."""
        if self.poller is not None:
            await self.poller.stop()
        await self.deferred.stop()
        await self.after_ack.stop()
        self.typing.stop_all()
        await self.live.stop()
        with contextlib.suppress(TelegramError):
            await self.bot.shutdown()

    async def check(self) -> list[str]:
        """Configuration and credential problems, for ``doctor``."""
        problems = self._config_problems()
        if not problems:
            try:
                await self.bot.get_me()
            except InvalidToken:
                problems.append("TELEGRAM_BOT_TOKEN is rejected by Telegram (getMe)")
            except TelegramError as exc:
                refused = f"Telegram refused getMe: {exc.message}"
                problems.append(self._unreachable_at(exc) if _unreachable(exc) else refused)
        return problems

    def _unreachable_at(self, exc: TelegramError) -> str:
        """The Bot API failing a call at start, with where it was looked for: the base URL, never
        the bot token (which Telegram's URLs carry in their path, after it)."""
        where = without_secrets(self.settings.api_url)
        return f"Telegram API unreachable at {where} (TELEGRAM_API_URL): {exc.message}"

    def _config_problems(self) -> list[str]:
        problems = []
        if not self.settings.bot_token or not self.settings.bot_token.get_secret_value():
            problems.append("TELEGRAM_BOT_TOKEN is not set")
        # in the words serve stops with (the secret's and the URL's shapes: the settings refuse them)
        problems.extend(self.settings.startup_problems())
        return problems


def _unreachable(exc: TelegramError) -> bool:
    """True when the Bot API did not answer (a network failure, a timeout, a 5xx): PTB raises its
    ``NetworkError`` for those, and for the 400s Telegram answers (``BadRequest``) as well."""
    return isinstance(exc, NetworkError) and not isinstance(exc, BadRequest)
