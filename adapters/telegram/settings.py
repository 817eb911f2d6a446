"""Telegram's settings: the ``telegram:`` section, ``TELEGRAM_*`` and ``CLARIGATE_TELEGRAM__*``."""

from __future__ import annotations

from typing import ClassVar

from pydantic import SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from clarigate.gateway.boundary.settings import PlatformSettings, TokenShape, with_default_path


class TelegramSettings(PlatformSettings):
    """Telegram bot credentials (``TELEGRAM_*``)."""

    model_config = SettingsConfigDict(env_prefix="TELEGRAM_")
    env_fields: ClassVar[tuple[str, ...]] = ("bot_token", "webhook_secret", "webhook_url", "api_url")
    credential_hint: ClassVar[str] = "TELEGRAM_BOT_TOKEN"
    token_shapes: ClassVar[tuple[TokenShape, ...]] = (
        # the bot token is in the URL path: https://api.telegram.org/bot<id>:<secret>/getMe
        ("/bot", r"(/bot)\d+:[A-Za-z0-9_-]+", r"\1***"),
        (None, r"\b\d{6,}:[A-Za-z0-9_-]{30,}\b", "***"),
    )

    sdk_loggers: ClassVar[tuple[str, ...]] = ("telegram",)  # the bot token is in its URLs

    bot_token: SecretStr | None = None
    webhook_secret: SecretStr | None = None
    webhook_url: str | None = None  # polling when unset
    api_url: str = "https://api.telegram.org/bot"

    @field_validator("api_url")
    @classmethod
    def _api_base(cls, url: str) -> str:
        """``http://host`` means ``http://host/bot`` (the SDK appends the token right after it)."""
        return with_default_path(url.rstrip("/"), "/bot")

    def has_credentials(self) -> bool:
        """The bot token (the webhook secret goes with a webhook only)."""
        return self.bot_token is not None

    def startup_problems(self) -> list[str]:
        """A webhook without its secret: anyone could post updates. The URL may come from the YAML
        file or the environment (both named); the secret from the environment only."""
        if self.webhook_url and not self.webhook_secret:
            return [
                "telegram.webhook_url (TELEGRAM_WEBHOOK_URL) is set without TELEGRAM_WEBHOOK_SECRET "
                "(required; secrets come from the environment)"
            ]
        return []

    async def identity(self) -> str | None:
        """The bot id: the number before the token's colon, so no call is needed."""
        if self.bot_token is None:
            return None
        return f"bot {self.bot_token.get_secret_value().split(':', 1)[0]}"
